import { normaliseEmail, normalisePhone } from '../../contacts/lookup.js';
import {
  ensureContact,
  recordCallOnContact,
  setEmailIfFree,
  setNameIfMissing,
} from '../../contacts/post-call-changes.js';
import type { CallRecordWire } from '../schemas.js';
import { otherPartyOf, PermanentActionError, type PostCallAction } from './action.js';

/**
 * `contact_update` (free): the other party's contact, found by phone or email (created when new),
 * named from the call's parameters when it has no name, and the call counted on it once, with a
 * `post_call` note (the call's summary) written in the same transaction, so also once.
 */
export const contactUpdate: PostCallAction<'contact_update'> = async ({ run, record }) => {
  const phone = normalisePhone(otherPartyOf(record));
  const email = normaliseEmail(record.parameters.email);
  const name = nameFromParameters(record.parameters);
  if (!phone && !email)
    throw new PermanentActionError('the call has no phone number or email to find the contact by');
  const { contact, created } = await ensureContact(run.workspaceId, {
    phone,
    email,
    name,
    source: 'Call',
  });
  if (name) await setNameIfMissing(run.workspaceId, contact.contactId, name);
  const emailOutcome = email ? await setEmailIfFree(run.workspaceId, contact.contactId, email) : undefined;
  const counted = await recordCallOnContact(run.workspaceId, contact.contactId, {
    callId: run.callId,
    at: record.ended_at ?? record.created_at,
    sentiment: record.sentiment.label,
    summary: record.summary,
    note: postCallNote(record),
  });
  return {
    contact_id: contact.contactId,
    created,
    call_counted: counted.counted,
    ...(emailOutcome ? { email: emailOutcome } : {}),
  };
};

/** The note the call leaves on the contact: its direction, outcome and summary. */
function postCallNote(record: CallRecordWire): string {
  const direction = record.direction === 'inbound' ? 'Inbound call' : 'Outbound call';
  const summary = record.summary.trim();
  return `${direction} (${record.status}): ${summary || 'no summary'}`;
}

function nameFromParameters(parameters: Record<string, string>): string | undefined {
  const full = parameters.name ?? parameters.full_name;
  if (full?.trim()) return full.trim();
  const joined = [parameters.first_name, parameters.last_name].filter((p) => p?.trim()).join(' ');
  return joined || undefined;
}
