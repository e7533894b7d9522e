/** How the dashboard names a call's end reason, channel and who answered (the API's values, readable). */

export const END_REASON_LABELS = {
  completed: 'Completed',
  no_answer: 'No answer',
  busy: 'Busy',
  failed: 'Failed',
  canceled: 'Cancelled',
  hangup: 'Hung up from the console',
  lost: 'Lost',
  not_answering: 'Agent not answering',
  agent_hangup: 'Agent ended the call',
  voicemail: 'Voicemail',
  transfer_failed: 'Transfer failed',
} as const;
export type EndReason = keyof typeof END_REASON_LABELS;

export const endReasonLabel = (reason: string | null): string =>
  reason === null ? '—' : (END_REASON_LABELS[reason as EndReason] ?? reason);

export const CHANNEL_LABELS = { phone: 'Phone', web: 'Test chat' } as const;

export const ANSWERED_BY_LABELS = { human: 'A person', machine: 'A machine', unknown: 'Not known' } as const;

/** Seconds as m:ss (a transcript line's time, a player's position). */
export const clock = (seconds: number): string => {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};
