/**
 * The calling domain's entry points for other domains (the post-call pipeline, the CLI, campaigns):
 * start a call, read one with its transcript, recording key and status history, store its sentiment.
 */
export { getCall, getCallFacts, setCallSentiment, type CallView } from './call-log.js';
export { startCall, type StartCallInput } from './start-call.js';
export { recordingKey } from './lifecycle.js';
export type { Call, CallStatusEvent } from './entities.js';
export { publicRecording, pastRetention, type PublicRecording } from './recording-links.js';
export { isShortCode, shortUrl } from './short-codes.js';
export { dayKey, localDay, readCallStats, type CallStats } from './call-stats.js';
export { LATENCY_COUNTERS, percentileFromBuckets } from './latency-histogram.js';
export { STATS_STATUSES, type StatsStatus } from './entities.js';
