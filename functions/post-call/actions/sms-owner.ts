import type { PostCallAction } from './action.js';
import { sendChargedSms } from './charged-sms.js';

const DEFAULT_OWNER_SMS = 'Call {{caller}} ({{duration}}): {{summary}}';

/** `sms_owner` (charged): an SMS to the business owner's mobile, from the agent's number. */
export const smsOwner: PostCallAction<'sms_owner'> = ({ run, record, config, lastTry }) =>
  sendChargedSms(run, record, config.to, config.message ?? DEFAULT_OWNER_SMS, lastTry);
