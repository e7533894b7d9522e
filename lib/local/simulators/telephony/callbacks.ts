import { postSignedForm } from '../http-kit.js';
import type { Step } from './scenarios.js';
import {
  ACCOUNT_SID,
  ENDED_STATUSES,
  RECORDING_TTL_MS,
  sid,
  wallMs,
  type SimCall,
  type SimState,
  type SimulatedCallback,
} from './state.js';
import { wavRecording } from './wav.js';

/** The simulator's callbacks to the service: signed, form-encoded, as Twilio sends them. */

/** POSTs a signed, form-encoded callback; retries a network error or 5xx a few times (http-kit's postSignedForm). */
export function postSigned(
  sim: SimState,
  url: string,
  params: Record<string, string>,
): Promise<{ status: number; text: string }> {
  return postSignedForm(url, params, {
    authToken: sim.options.authToken,
    userAgent: 'TwilioProxy/1.1 (simulator)',
    stopped: () => sim.stopped,
  });
}

export function callParams(call: SimCall): Record<string, string> {
  return {
    AccountSid: ACCOUNT_SID,
    ApiVersion: '2010-04-01',
    CallSid: call.sid,
    From: call.from,
    To: call.to,
    Direction: call.direction,
  };
}

function statusParams(sim: SimState, call: SimCall, step: Step, sequence: number): Record<string, string> {
  // The wall-clock time the step is played at (its simulated time scaled): never in the future.
  const at = new Date(call.startWall + wallMs(sim, call, step.at)).toISOString();
  const params: Record<string, string> = {
    ...callParams(call),
    CallbackSource: 'call-progress-events',
    SequenceNumber: String(sequence),
    Timestamp: at,
  };
  if (step.status === 'started')
    return { ...params, CallStatus: 'in-progress', ConversationStatus: 'started' };
  params.CallStatus = step.status ?? 'completed';
  if (['completed', 'busy', 'no-answer', 'failed', 'canceled'].includes(params.CallStatus)) {
    params.CallDuration = String(params.CallStatus === 'completed' ? call.timeline.talkSeconds : 0);
  }
  return params;
}

function recordingParams(sim: SimState, call: SimCall, recordingSid: string): Record<string, string> {
  return {
    AccountSid: ACCOUNT_SID,
    CallSid: call.sid,
    RecordingSid: recordingSid,
    RecordingUrl: `${sim.baseUrl}/recordings/${recordingSid}`,
    RecordingStatus: 'completed',
    RecordingDuration: String(call.timeline.talkSeconds),
    RecordingChannels: '1',
    RecordingSource: 'StartCallRecordingTwiML',
  };
}

/** One callback; the same step sent twice carries the same parameters (a true duplicate). */
export async function deliver(sim: SimState, call: SimCall, step: Step, original: Step): Promise<void> {
  const entry: SimulatedCallback = { kind: step.kind, status: step.status, duplicate: !!step.duplicate };
  call.callbacks.push(entry);
  let params = sim.sent.get(original);
  let url = call.statusCallback;
  if (step.kind === 'recording') {
    if (!call.recordingCallback) return;
    url = call.recordingCallback;
    if (!params) {
      const recordingSid = sid('RE');
      sim.recordings.set(recordingSid, {
        wav: wavRecording(call.transcript, call.timeline.talkSeconds),
        expires: Date.now() + RECORDING_TTL_MS,
      });
      params = recordingParams(sim, call, recordingSid);
    }
  } else if (!params) {
    call.sequence += 1;
    params = statusParams(sim, call, step, call.sequence);
  }
  if (ENDED_STATUSES.includes(params.CallStatus ?? '') && params.ConversationStatus === undefined) {
    call.outcome ??= {
      status: params.CallStatus,
      duration: Number(params.CallDuration ?? 0),
      endTime: params.Timestamp ?? new Date().toISOString(),
    };
  }
  sim.sent.set(original, params);
  sim.callbacksInFlight += 1;
  try {
    entry.http_status = (await postSigned(sim, url, params)).status;
  } catch (error) {
    entry.error = String(error);
  } finally {
    sim.callbacksInFlight -= 1;
  }
}
