import { workspaceAdminEmails } from '../../access/admins.js';
import { sendEmail } from '../../providers/email/index.js';
import { formatDuration } from '../analysis.js';
import type { CallRecordWire } from '../schemas.js';
import { markSent, otherPartyOf, PermanentActionError, type PostCallAction } from './action.js';

/**
 * `email_summary` (charged): the call's summary by email, to `config.to` or the workspace's admins;
 * each recipient once (an email to a recipient already marked sent is not sent again).
 */
export const emailSummary: PostCallAction<'email_summary'> = async ({ run, record, config }) => {
  const recipients =
    config.to === undefined
      ? await workspaceAdminEmails(run.organisationId, run.workspaceId)
      : [config.to].flat();
  if (recipients.length === 0)
    throw new PermanentActionError('no recipients: set config.to or add a workspace admin');
  for (const to of recipients) {
    if (run.sentTo?.includes(to)) continue; // sent by an earlier try
    await sendEmail({
      to,
      subject: `Call summary: ${otherPartyOf(record)} (${record.status})`,
      text: emailText(record),
      idempotencyKey: `post-call:${run.callId}:${run.actionId}:${to}`,
    });
    await markSent(run, to);
  }
  return { to: recipients };
};

function emailText(record: CallRecordWire): string {
  const lines = [
    record.summary,
    '',
    `Call: ${record.call_id} (${record.direction}, ${record.status}${record.end_reason ? `, ${record.end_reason}` : ''})`,
    `From: ${record.from_phone}   To: ${record.to_phone}`,
    `Duration: ${formatDuration(record.duration_seconds)}   Sentiment: ${record.sentiment.label} (${record.sentiment.score})`,
  ];
  if (record.properties.length > 0) {
    lines.push('', 'Properties quoted:');
    for (const p of record.properties) lines.push(`  ${p.listing_id}: ${p.address} — ${p.price}`);
  }
  if (record.recording) lines.push('', `Recording: ${record.recording.url}`);
  if (record.transcript.length > 0) {
    lines.push('', 'Transcript:');
    for (const turn of record.transcript)
      lines.push(`  ${turn.role === 'agent' ? 'Agent' : 'Caller'}: ${turn.text}`);
  }
  return lines.join('\n');
}
