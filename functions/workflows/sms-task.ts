import { findContactByPhone } from '../contacts/lookup.js';
import { SmsMessageEntity, type SmsMessage } from '../sms/entities.js';
import { sendSms } from '../sms/send-sms.js';
import { deliver } from '../sms/sending.js';
import type { WorkflowRun } from './entities.js';

/*
 * A workflow's SMS task (tasks.ts loads it with the first SMS task a container runs: the SMS domain's
 * sending code is not part of a run that only calls, emails or writes notes).
 */

/**
 * The SMS an earlier attempt of this run's task sent, if any: the message the SMS service recorded for
 * the recipient's thread since the task's input was recorded, created by this run. Found still
 * `queued` (that attempt stopped before the provider), it is delivered now — once: the charge and the
 * provider's send are keyed by the message id.
 */
export async function runSms(
  run: WorkflowRun,
  input: Record<string, unknown>,
): Promise<SmsMessage | undefined> {
  const contactId =
    (input.contact_id as string | undefined) ??
    (await findContactByPhone(run.workspaceId, String(input.to_phone)))?.contactId;
  if (!contactId) return undefined;
  const { data } = await SmsMessageEntity.query
    .byThread({ workspaceId: run.workspaceId, contactId })
    .gte({ createdAt: String(input.prepared_at) })
    .where((attr, op) => `${op.eq(attr.createdBy, run.runId)} AND ${op.eq(attr.direction, 'outbound')}`)
    .go({ pages: 'all' });
  const message = data[0];
  if (!message || message.status !== 'queued' || message.held) return message;
  return (await deliver(message, { insufficient: 'fail' })).message;
}

export function sendRunSms(run: WorkflowRun, input: Record<string, unknown>): Promise<SmsMessage> {
  const contactId = input.contact_id as string | undefined;
  return sendSms({
    workspaceId: run.workspaceId,
    organisationId: run.organisationId,
    ...(contactId ? { contactId } : { to: String(input.to_phone) }),
    body: String(input.body),
    kind: 'workflow',
    // The run that sent it: how a retry of the run finds this message instead of sending another.
    createdBy: run.runId,
  });
}
