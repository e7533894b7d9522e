import { defineRoute, type Access } from '../platform/http/route.js';
import * as pagination from '../platform/pagination.js';
import * as sms from './schemas.js';

const WS = '/api/v1/workspaces/{workspace_id}';
const MESSAGES = `${WS}/sms`;
const CAMPAIGNS = `${WS}/sms-campaigns`;
const CAMPAIGN = `${CAMPAIGNS}/{campaign_id}`;
const INBOX = `${WS}/sms-inbox`;

/** Sends go through the SMS provider (its credentials are the telephony secret's) and may hold or queue work. */
const SENDS: Access = { table: 'readwrite', secrets: ['telephony'], sendsTo: ['sms'] };
const READS: Access = { table: 'readwrite' };

/**
 * SMS (workspace: any role reads, members and admins write; API keys with `sms:read` / `sms:write`, in
 * their own workspace). Charged 5 credits a segment; see functions/sms/sending.ts.
 */
export const smsRoutes = {
  sendSms: defineRoute({
    method: 'POST',
    path: MESSAGES,
    summary: 'Send an SMS',
    description:
      'Send an SMS (member): {to_phone, body (1–1,600 characters), from_phone? (one of the workspace’s numbers; ' +
      'default its first)}. Charged 5 credits a segment (GSM-7 160 / 153 a part, UCS-2 70 / 67), 402 when short; 409 ' +
      '`Contact has unsubscribed` for an unsubscribed contact or a suppressed number. A number with no contact becomes ' +
      'one (source manual). While billing is past due the message is held (status queued, held true) and sent when ' +
      'billing recovers. A provider error or timeout: status failed with failure_reason, and its charge refunded',
    auth: 'user_or_api_key',
    scope: 'sms:write',
    body: sms.SendSmsBody,
    response: sms.MessageResponse,
    successStatus: 201,
    errors: {
      402: 'Insufficient credits',
      409: 'No number to send from, the contact has no phone number or has unsubscribed, or sending is refused',
    },
    access: SENDS,
  }),
  getSms: defineRoute({
    method: 'GET',
    path: `${MESSAGES}/{message_id}`,
    summary: 'Get an SMS',
    description: 'One SMS, either direction, with its delivery status (viewer)',
    auth: 'user_or_api_key',
    scope: 'sms:read',
    response: sms.MessageResponse,
    access: READS,
  }),
  createSmsCampaign: defineRoute({
    method: 'POST',
    path: CAMPAIGNS,
    summary: 'Create an SMS campaign',
    description:
      'Create an SMS campaign, status draft (member): {name, body, from_phone?, audience: exactly one of ' +
      'contact_ids, tag, all: true (every contactable contact)}. Placeholders {{first_name}}, {{last_name}}, ' +
      '{{name}}, {{phone}}, {{email}} and the contact’s attribute keys; one with no value renders empty',
    auth: 'user_or_api_key',
    scope: 'sms:write',
    body: sms.CreateCampaignBody,
    response: sms.CampaignResponse,
    successStatus: 201,
    access: READS,
  }),
  listSmsCampaigns: defineRoute({
    method: 'GET',
    path: CAMPAIGNS,
    summary: 'List SMS campaigns',
    description: 'The workspace’s SMS campaigns, newest first (viewer)',
    auth: 'user_or_api_key',
    scope: 'sms:read',
    query: pagination.ListQuery,
    response: sms.CampaignList,
    access: READS,
  }),
  compareSmsCampaigns: defineRoute({
    method: 'GET',
    path: `${CAMPAIGNS}/compare`,
    summary: 'Compare SMS campaigns',
    description:
      'Compare 2 to 5 SMS campaigns (?ids=a,b; 422 otherwise), in the order asked: counts and delivery, reply and ' +
      'opt-out rates (each over sent) (viewer)',
    auth: 'user_or_api_key',
    scope: 'sms:read',
    query: sms.CompareQuery,
    response: sms.ComparisonResponse,
    access: READS,
  }),
  getSmsCampaign: defineRoute({
    method: 'GET',
    path: CAMPAIGN,
    summary: 'Get an SMS campaign',
    description:
      'An SMS campaign with its counts {recipients, sent, delivered, failed, skipped, replies, opt_outs, credits} ' +
      'and progress {done, total} (viewer)',
    auth: 'user_or_api_key',
    scope: 'sms:read',
    response: sms.CampaignResponse,
    access: READS,
  }),
  updateSmsCampaign: defineRoute({
    method: 'PATCH',
    path: CAMPAIGN,
    summary: 'Update an SMS campaign',
    description:
      'Change a draft (name, body, from_phone, audience); {status: sending} sends it in the background (202); ' +
      '{status: cancelled} stops a draft or a sending campaign; anything else 409 (member)',
    auth: 'user_or_api_key',
    scope: 'sms:write',
    body: sms.UpdateCampaignBody,
    response: sms.CampaignResponse,
    errors: {
      409: 'The campaign is not a draft (or has finished), so it cannot change, be sent or be cancelled',
    },
    access: SENDS,
  }),
  deleteSmsCampaign: defineRoute({
    method: 'DELETE',
    path: CAMPAIGN,
    summary: 'Delete an SMS campaign',
    description: 'Delete an SMS campaign that is not sending (409 while it is: cancel it first) (member)',
    auth: 'user_or_api_key',
    scope: 'sms:write',
    successStatus: 204,
    errors: { 409: 'The campaign is sending: cancel it first' },
    access: READS,
  }),
  listSmsInbox: defineRoute({
    method: 'GET',
    path: INBOX,
    summary: 'List the SMS inbox',
    description: 'SMS threads, one per contact, newest activity first, with unread counts (viewer)',
    auth: 'user_or_api_key',
    scope: 'sms:read',
    query: sms.InboxQuery,
    response: sms.ThreadList,
    access: READS,
  }),
  getSmsThread: defineRoute({
    method: 'GET',
    path: `${INBOX}/{contact_id}`,
    summary: 'Get an SMS thread',
    description:
      'A contact’s SMS thread, both directions, newest first; reading it marks it read (unread 0) (viewer)',
    auth: 'user_or_api_key',
    scope: 'sms:read',
    query: pagination.ListQuery,
    response: sms.MessageList,
    access: READS,
  }),
  replySmsThread: defineRoute({
    method: 'POST',
    path: `${INBOX}/{contact_id}`,
    summary: 'Reply in an SMS thread',
    description: 'Reply in a contact’s thread: {body}; sent and charged like a direct SMS (member)',
    auth: 'user_or_api_key',
    scope: 'sms:write',
    body: sms.ReplyBody,
    response: sms.MessageResponse,
    successStatus: 201,
    errors: {
      402: 'Insufficient credits',
      409: 'No number to send from, the contact has no phone number or has unsubscribed, or sending is refused',
    },
    access: SENDS,
  }),
};
