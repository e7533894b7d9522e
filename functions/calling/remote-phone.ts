/**
 * The other party of a call: the caller of an inbound call, the called number of an outbound one.
 * A test chat (`channel: web`) has none. The call log's `remote_phone`, and the key of its `phone`
 * filter (entities.ts: calls by the other party).
 */
export function remotePhoneOf(call: {
  direction?: 'outbound' | 'inbound';
  toPhone?: string;
  fromPhone?: string;
  channel?: 'phone' | 'web';
}): string | undefined {
  if (call.channel === 'web') return undefined;
  const phone = call.direction === 'inbound' ? call.fromPhone : call.toPhone;
  return phone && phone.startsWith('+') ? phone : undefined;
}

/** The stored `remotePhone` of a call without another party (the index's key needs a value; it skips these). */
export const NO_REMOTE_PHONE = 'none';
