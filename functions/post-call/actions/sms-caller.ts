import { normalisePhone } from '../../contacts/lookup.js';
import { otherPartyOf, PermanentActionError, type PostCallAction } from './action.js';
import { sendChargedSms } from './charged-sms.js';

const DEFAULT_CALLER_SMS =
  'Thanks for speaking with {{agent_name}}. Reply to this message if there is anything else we can help with.';
/**
 * The default when the call has a recording: its public page's link ({{recording_url}}), where the
 * replies to this message show too (functions/recordings/).
 */
const DEFAULT_CALLER_SMS_WITH_LINK =
  'Thanks for speaking with {{agent_name}}. Listen to the call: {{recording_url}} Reply to this message ' +
  'if there is anything else we can help with; your replies appear on that page.';

/** `sms_caller` (charged): an SMS to the other party of the call, from the agent's number. */
export const smsCaller: PostCallAction<'sms_caller'> = async ({ run, record, config, lastTry }) => {
  const to = normalisePhone(otherPartyOf(record));
  if (!to) throw new PermanentActionError('the caller has no phone number an SMS can go to');
  const fallback = record.recording?.short_url ? DEFAULT_CALLER_SMS_WITH_LINK : DEFAULT_CALLER_SMS;
  return sendChargedSms(run, record, to, config.message ?? fallback, lastTry);
};
