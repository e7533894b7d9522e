/**
 * A real, playable WAV recording (RIFF, PCM 16-bit mono, 8 kHz — telephone quality): one soft tone
 * per transcript turn (agent and caller in different pitches) with short pauses. The audio is capped
 * at `MAX_AUDIO_SECONDS` so a 30-minute simulated call does not make a 30 MB file.
 */
export const SAMPLE_RATE = 8000;
export const MAX_AUDIO_SECONDS = 8;

export function wavRecording(turns: { role: 'agent' | 'user' }[], seconds: number): Buffer {
  const audioSeconds = Math.max(1, Math.min(MAX_AUDIO_SECONDS, Math.floor(seconds)));
  const samples = audioSeconds * SAMPLE_RATE;
  const pcm = Buffer.alloc(samples * 2);
  const parts = Math.max(1, turns.length);
  const perTurn = Math.floor(samples / parts);
  for (let i = 0; i < samples; i += 1) {
    const turnIndex = Math.min(parts - 1, Math.floor(i / perTurn));
    const inTurn = i - turnIndex * perTurn;
    const frequency = turns[turnIndex]?.role === 'user' ? 330 : 440;
    // 80 % tone with a gentle fade in and out, 20 % silence between turns.
    const toneLength = perTurn * 0.8;
    let sample = 0;
    if (inTurn < toneLength) {
      const fade = Math.min(1, inTurn / 400, (toneLength - inTurn) / 400);
      sample = Math.sin((2 * Math.PI * frequency * i) / SAMPLE_RATE) * 0.3 * fade;
    }
    pcm.writeInt16LE(Math.round(sample * 32767), i * 2);
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
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
