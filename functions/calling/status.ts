import { END_REASONS, type EndReason } from '../providers/telephony/twilio-format.js';

/**
 * The call lifecycle as pure rules (no AWS): statuses and their order, what a late or duplicate
 * callback may change (nothing), how long a call lasted, when it is considered lost, and when the
 * post-call pipeline may be told it ended.
 *
 *   created → initiated → connected → inprogress → completed | failed
 *
 * `dialling` is internal: the dispatcher has claimed the call and is asking the provider to dial it
 * (shown as `created`). A status may be skipped (a call that fails while ringing never connects), but
 * never revisited: a transition is allowed only to a higher rank, and the two terminal statuses share
 * the top rank, so a call ends once.
 */
export const CALL_STATUSES = [
  'created',
  'initiated',
  'connected',
  'inprogress',
  'completed',
  'failed',
] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

export const INTERNAL_STATUSES = [
  'created',
  'dialling',
  'initiated',
  'connected',
  'inprogress',
  'completed',
  'failed',
] as const;
export type InternalStatus = (typeof INTERNAL_STATUSES)[number];

export { END_REASONS, type EndReason };

export const RANK: Record<InternalStatus, number> = {
  created: 0,
  dialling: 1,
  initiated: 2,
  connected: 3,
  inprogress: 4,
  completed: 5,
  failed: 5,
};
export const TERMINAL_RANK = 5;

export const isTerminal = (status: InternalStatus): boolean => RANK[status] === TERMINAL_RANK;
export const wireStatus = (status: InternalStatus): CallStatus =>
  status === 'dialling' ? 'created' : status;

/** Whether a call in `from` may move to `to`: only forward, and never out of a terminal status. */
export const canMove = (from: InternalStatus, to: InternalStatus): boolean => RANK[to] > RANK[from];

/** Internal statuses a wire status filter matches (`created` also finds calls being dialled). */
export const statusesMatching = (status: CallStatus): InternalStatus[] =>
  status === 'created' ? ['created', 'dialling'] : [status];

/** Timestamp attribute of each status (the `<status>_at` fields of the call). */
export const STATUS_TIME = {
  initiated: 'initiatedAt',
  connected: 'connectedAt',
  inprogress: 'inprogressAt',
  completed: 'endedAt',
  failed: 'endedAt',
} as const;

/**
 * Whole seconds from answer to end: the provider's figure when it gives one (what it bills us, and what
 * we bill), else our timestamps. The `<status>_at` timestamps are when each event happened on the wall
 * clock, as the provider stamped it or as we observed it; they bound the call but need not add up to its
 * duration — the local simulator plays a 60-second call in a second (SIMULATOR_TIME_SCALE), so its
 * `duration_seconds` is 60 while `connected_at` and `ended_at` are a second apart.
 */
export function callDurationSeconds(input: {
  answeredAt?: string;
  endedAt: string;
  providerSeconds?: number;
}): number {
  if (!input.answeredAt)
    return input.providerSeconds !== undefined && input.providerSeconds > 0
      ? Math.floor(input.providerSeconds)
      : 0;
  if (input.providerSeconds !== undefined) return Math.max(0, Math.floor(input.providerSeconds));
  return Math.max(0, Math.floor((Date.parse(input.endedAt) - Date.parse(input.answeredAt)) / 1000));
}

/** Allowance for queueing and ringing before the conversation itself. */
export const LOST_MARGIN_SECONDS = 300;
/** A call still `created` this long after its creation is dispatched again (the first send may have failed). */
export const REDISPATCH_AFTER_SECONDS = 30;
/** How long the post-call message waits for a recording or transcript that is still coming. */
export const POST_CALL_GRACE_SECONDS = 120;

/** When an open call is given up as lost: its maximum duration plus the margin, after creation. */
export function deadlineFor(createdAt: string, maxDurationSeconds: number): string {
  return new Date(Date.parse(createdAt) + (maxDurationSeconds + LOST_MARGIN_SECONDS) * 1000).toISOString();
}

/**
 * A missed call: an inbound call refused because its agent was not answering (end reason
 * `not_answering`). It is logged so the owner sees it, and that is all: no one talked, so it is never
 * charged, and there is no conversation to act on, so it is never reported to the post-call pipeline.
 */
export const isMissedCall = (call: { endReason?: EndReason }): boolean => call.endReason === 'not_answering';

export interface PostCallFacts {
  status: InternalStatus;
  endReason?: EndReason;
  record: boolean;
  connectedAt?: string;
  endedAt?: string;
  recordingKey?: string;
  hasTranscript: boolean;
  transcriptExpected: boolean;
}

/**
 * Whether the post-call pipeline may be told the call ended: it has ended, and the recording and
 * transcript it will have are stored — or they are overdue (`POST_CALL_GRACE_SECONDS`), or the call
 * was lost (nothing more will come). Never for a missed call.
 */
export function readyForPostCall(call: PostCallFacts, now: Date): boolean {
  if (!isTerminal(call.status) || isMissedCall(call)) return false;
  if (call.endReason === 'lost') return true;
  if (call.endedAt && now.getTime() - Date.parse(call.endedAt) > POST_CALL_GRACE_SECONDS * 1000) return true;
  const answered = call.connectedAt !== undefined;
  if (answered && call.record && !call.recordingKey) return false;
  if (answered && call.transcriptExpected && !call.hasTranscript) return false;
  return true;
}
