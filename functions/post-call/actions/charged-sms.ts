import { recordMovement } from '../../billing/ledger.js';
import { clock } from '../../platform/clock.js';
import { chargeSms } from '../../billing/metering.js';
import { sendSms, SmsSendError } from '../../providers/sms/index.js';
import { formatDuration, renderTemplate } from '../analysis.js';
import type { ActionRun } from '../entities.js';
import type { CallRecordWire } from '../schemas.js';
import { agentNumberOf, markSent, otherPartyOf, PermanentActionError } from './action.js';
import { postCallSmsSent } from './sms-sent.js';

/** What an SMS template may name: the call's parameters, and these. */
function templateValues(record: CallRecordWire): Record<string, string | undefined> {
  return {
    ...record.parameters,
    agent_name: record.agent_name ?? undefined,
    summary: record.summary,
    caller: otherPartyOf(record),
    duration: formatDuration(record.duration_seconds),
    sentiment: record.sentiment.label,
    /** The public recording page (empty when the call has no recording). */
    recording_url: record.recording?.short_url ?? undefined,
  };
}

const shortCodeOf = (record: CallRecordWire): string | undefined =>
  record.recording?.short_url ? record.recording.short_url.split('/').pop() : undefined;

/**
 * The owner's and the caller's SMS: charged first (prepaid: no credits, no SMS — 402, failed), once per
 * SMS id however often the run tries; sent once (the recipient is marked sent); refunded once when it
 * will never go out.
 */
export async function sendChargedSms(
  run: ActionRun,
  record: CallRecordWire,
  to: string,
  template: string,
  lastTry: boolean,
) {
  const text = renderTemplate(template, templateValues(record)).replace(/\s+/g, ' ').trim().slice(0, 480);
  if (!run.smsId) throw new PermanentActionError('the run has no SMS id');
  // Prepaid: no credits, no SMS (402 → failed). Charged once per SMS id, however often this runs.
  const charge = await chargeSms({ organisationId: run.organisationId, smsId: run.smsId, text });
  if (run.sentTo?.includes(to)) {
    // Sent by an earlier try that stopped before it finished: do not send it again.
    return {
      sms_id: run.smsId,
      to,
      provider_message_id: null,
      segments: charge.segments,
      credits: charge.credits,
    };
  }
  let receipt;
  try {
    receipt = await sendSms({
      to,
      from: agentNumberOf(record),
      text,
      idempotencyKey: `post-call:${run.smsId}`,
    });
    await markSent(run, to);
  } catch (error) {
    const final = lastTry || (error instanceof SmsSendError && error.permanent);
    if (final && charge.units > 0) {
      // It will never go out: give the credits back (once: the refund has its own cause key).
      await recordMovement({
        organisationId: run.organisationId,
        kind: 'refund',
        amountUnits: charge.units,
        reason: `SMS ${run.smsId} not sent: ${(error as Error).message.slice(0, 200)}`,
        sourceKey: `sms:${run.smsId}:refund`,
      });
    }
    throw error;
  }
  // Remembered for replies (a failure here retries the run; the SMS is not sent again: it is marked sent).
  await postCallSmsSent({
    workspaceId: run.workspaceId,
    organisationId: run.organisationId,
    smsId: run.smsId,
    to,
    from: agentNumberOf(record),
    text,
    shortCode: shortCodeOf(record),
    sentAt: clock.now().toISOString(),
  });
  return {
    sms_id: run.smsId,
    to,
    provider_message_id: receipt.messageId,
    segments: charge.segments,
    credits: charge.credits,
  };
}
