/** A post-call SMS that went out: what the SMS domain remembers so a reply is tied to it. */
export interface SentPostCallSms {
  workspaceId: string;
  organisationId: string;
  smsId: string;
  to: string;
  from: string;
  text: string;
  /** The recording's short code the SMS carried a link to, if the call has one. */
  shortCode?: string;
  sentAt: string;
}
export type SentPostCallSmsListener = (sent: SentPostCallSms) => Promise<void>;

let sentListener: SentPostCallSmsListener | undefined;

/**
 * Told of each post-call SMS once it is sent (the actions' queue consumer, a composition point, hands
 * in the SMS domain's memory of outbound messages: a reply to this SMS is then tied to the call's
 * recording short code and shows on its public page).
 */
export function onPostCallSmsSent(listener: SentPostCallSmsListener | undefined): void {
  sentListener = listener;
}

/** Tells the listener, if any, of a post-call SMS that went out. */
export async function postCallSmsSent(sent: SentPostCallSms): Promise<void> {
  await sentListener?.(sent);
}
