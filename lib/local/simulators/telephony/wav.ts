/**
 * A real, playable WAV recording as long as the call it records (RIFF, PCM 8-bit unsigned mono at
 * 4 kHz: 4 kB a second, 240 kB for the simulator's 60-second call, 7.2 MB for its 30-minute one). It is
 * mostly silence: a soft tone at the start of each transcript turn (agent and caller in different
 * pitches), at the turn's offset. Its length is the call's duration in simulated seconds, so its header
 * agrees with the call's `duration_seconds` whatever SIMULATOR_TIME_SCALE played it at.
 */
export const SAMPLE_RATE = 4000;
export const BITS_PER_SAMPLE = 8;
/** The mid-point of unsigned 8-bit PCM. */
const SILENCE = 128;
/** At most this long a tone per turn (the rest of the turn is silence). */
const MAX_TONE_SECONDS = 2;

export function wavRecording(
  turns: { role: 'agent' | 'user'; offset_seconds?: number }[],
  seconds: number,
): Buffer {
  const audioSeconds = Math.max(1, Math.round(seconds));
  const samples = audioSeconds * SAMPLE_RATE;
  const pcm = Buffer.alloc(samples, SILENCE);
  // Turns without an offset are spread evenly over the recording.
  const starts = turns.map(
    (turn, i) => turn.offset_seconds ?? (i * audioSeconds) / Math.max(1, turns.length),
  );
  turns.forEach((turn, i) => {
    const start = Math.floor(starts[i] * SAMPLE_RATE);
    if (start >= samples) return;
    const next = i + 1 < turns.length ? Math.floor(starts[i + 1] * SAMPLE_RATE) : samples;
    // A tone over at most 80 % of the turn (a pause before the next one), 2 s at most.
    const length = Math.min(
      MAX_TONE_SECONDS * SAMPLE_RATE,
      Math.floor((next - start) * 0.8),
      samples - start,
    );
    const frequency = turn.role === 'user' ? 330 : 440;
    for (let n = 0; n < length; n += 1) {
      const fade = Math.min(1, n / 200, (length - n) / 200);
      const sample = Math.sin((2 * Math.PI * frequency * n) / SAMPLE_RATE) * 0.3 * fade;
      pcm[start + n] = Math.round(SILENCE + sample * 127);
    }
  });
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * (BITS_PER_SAMPLE / 8), 28); // byte rate
  header.writeUInt16LE(BITS_PER_SAMPLE / 8, 32); // block align
  header.writeUInt16LE(BITS_PER_SAMPLE, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

/** Reads back a WAV's format (tests: "is this a playable recording?"). */
export function describeWav(
  bytes: Uint8Array,
): { sampleRate: number; channels: number; bitsPerSample: number; seconds: number } | undefined {
  const buffer = Buffer.from(bytes);
  if (
    buffer.length < 44 ||
    buffer.toString('ascii', 0, 4) !== 'RIFF' ||
    buffer.toString('ascii', 8, 12) !== 'WAVE'
  )
    return undefined;
  if (buffer.toString('ascii', 12, 16) !== 'fmt ' || buffer.readUInt16LE(20) !== 1) return undefined;
  const channels = buffer.readUInt16LE(22);
  const sampleRate = buffer.readUInt32LE(24);
  const bitsPerSample = buffer.readUInt16LE(34);
  if (buffer.toString('ascii', 36, 40) !== 'data') return undefined;
  const dataLength = buffer.readUInt32LE(40);
  if (dataLength !== buffer.length - 44) return undefined;
  return {
    sampleRate,
    channels,
    bitsPerSample,
    seconds: dataLength / (sampleRate * channels * (bitsPerSample / 8)),
  };
}
