import { normaliseEmail, normalisePhone } from '../../contacts/lookup.js';
import { ensureContact, setEmailIfFree, setNameIfMissing } from '../../contacts/post-call-changes.js';
import { mergeProfile } from '../../contacts/profiles.js';
import { extractProfile } from '../analysis.js';
import { otherPartyOf, PermanentActionError, type PostCallAction } from './action.js';

/**
 * `profile_enrichment` (free): what the transcript says about the other party (name, email, intents,
 * budget) and the listings quoted, merged into their contact's profile.
 */
export const profileEnrichment: PostCallAction<'profile_enrichment'> = async ({ run, record }) => {
  const phone = normalisePhone(otherPartyOf(record));
  const extract = extractProfile(
    record.transcript.map((t) => ({ role: t.role, text: t.text, offsetSeconds: t.offset_seconds })),
  );
  const email = normaliseEmail(extract.email);
  if (!phone && !email)
    throw new PermanentActionError('the call has no phone number or email to find the contact by');
  const { contact, created } = await ensureContact(run.workspaceId, {
    phone,
    email,
    name: extract.name,
    source: 'Call',
  });
  if (extract.name) await setNameIfMissing(run.workspaceId, contact.contactId, extract.name);
  const emailOutcome = email ? await setEmailIfFree(run.workspaceId, contact.contactId, email) : undefined;
  const profile = await mergeProfile(run.workspaceId, contact.contactId, {
    intents: extract.intents,
    ...(extract.budget !== undefined ? { budget: extract.budget } : {}),
    listings_of_interest: record.properties,
    last_call_sentiment: record.sentiment.label,
    last_call_id: run.callId,
  });
  return {
    contact_id: contact.contactId,
    created,
    profile,
    ...(emailOutcome ? { email: emailOutcome } : {}),
  };
};
