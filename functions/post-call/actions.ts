import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { isInGoodStanding } from '../billing/standing.js';
import { recordMovement } from '../billing/ledger.js';
import { chargeSms } from '../billing/metering.js';
import {
  ensureContact,
  mergeProfile,
  normaliseEmail,
  normalisePhone,
  recordCallOnContact,
  setEmailIfFree,
  setNameIfMissing,
} from '../contacts/service.js';
import { clock } from '../platform/clock.js';
import { HttpError } from '../platform/errors.js';
import { logger } from '../platform/logger.js';
import { sendMessage } from '../platform/queue.js';
import { sendEmail } from '../providers/email/index.js';
import { sendSms, SmsSendError } from '../providers/sms/index.js';
import { startDelivery } from '../webhook-deliveries/deliveries.js';
import { workspaceAdminEmails } from '../webhook-deliveries/notify.js';
import { extractProfile, formatDuration, renderTemplate } from './analysis.js';
import {
  ActionRunEntity,
  CHARGED_ACTIONS,
  postCallService,
  readActionRun,
  readPostCallRecord,
  type ActionRun,
} from './entities.js';
import { ACTION_CONFIGS, type ActionMessage, type CallRecordWire } from './schemas.js';
import { webhookPayload } from './payload.js';

/**
 * Step 2 of the pipeline (postCallActions queue): one action of one call. Each run is a small state
 * machine — queued → (held →) running → succeeded | failed — moved by conditional writes, so a
 * redelivered or duplicated message never sends an SMS, an email or a webhook twice.
 *
 * Charged actions (owner SMS, caller SMS, email) first ask billing whether the organisation is in
 * good standing; if not, the run is held (and listed under the organisation) until billing calls
 * `releaseHeldActions`. Other actions never ask.
 */

/** A run's claim holds this long (the slowest action: an email per admin, a provider call). */
const CLAIM_MS = 120_000;
/** Tries of an action that keeps failing for a passing reason before it is marked failed. */
export const MAX_TRIES = 5;

export type ActionOutcome = 'succeeded' | 'failed' | 'held' | 'noop' | 'busy' | 'retry';

/** An action that cannot succeed by trying again (bad config, no recipient, no credits, …). */
export class PermanentActionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentActionError';
  }
}

const runKey = (run: Pick<ActionRun, 'workspaceId' | 'callId' | 'actionId'>) => ({
  workspaceId: run.workspaceId,
  callId: run.callId,
  actionId: run.actionId,
});

/** Holds a queued charged action: the run becomes `held` and is listed under its organisation. */
async function hold(run: ActionRun): Promise<void> {
  const heldAt = clock.now().toISOString();
  await postCallService.transaction
    .write(({ actionRun, heldAction }) => [
      actionRun
        .patch(runKey(run))
        .set({ state: 'held', heldAt, updatedAt: heldAt })
        .where((attr, op) => op.eq(attr.state, 'queued'))
        .commit(),
      heldAction
        .put({
          organisationId: run.organisationId,
          workspaceId: run.workspaceId,
          callId: run.callId,
          actionId: run.actionId,
          heldAt,
        })
        .commit(),
    ])
    .go();
  // Canceled: it was not queued any more (held already, or taken by a duplicate): nothing to do.
}

/** Takes the run: queued or held (released), or running under a claim that lapsed. */
async function claim(run: ActionRun): Promise<{ token: string } | undefined> {
  const token = randomUUID();
  const now = clock.now();
  const nowIso = now.toISOString();
  const result = await postCallService.transaction
    .write(({ actionRun, heldAction }) => [
      actionRun
        .patch(runKey(run))
        .set({
          state: 'running',
          claimToken: token,
          claimExpiresAt: new Date(now.getTime() + CLAIM_MS).toISOString(),
          updatedAt: nowIso,
          ...(run.state === 'held' ? { releasedAt: nowIso } : {}),
        })
        .add({ tries: 1 })
        .where(
          (attr, op) =>
            `${op.eq(attr.state, 'queued')} OR ${op.eq(attr.state, 'held')} OR (${op.eq(attr.state, 'running')} AND ${op.lt(attr.claimExpiresAt, nowIso)})`,
        )
        .commit(),
      ...(run.heldAt
        ? [
            heldAction
              .delete({
                organisationId: run.organisationId,
                workspaceId: run.workspaceId,
                callId: run.callId,
                actionId: run.actionId,
              })
              .commit(),
          ]
        : []),
    ])
    .go();
  return result.canceled ? undefined : { token };
}

async function complete(
  run: ActionRun,
  token: string,
  outcome: { state: 'succeeded'; result: unknown } | { state: 'failed'; error: string },
) {
  const now = clock.now().toISOString();
  await ActionRunEntity.patch(runKey(run))
    .set({
      state: outcome.state,
      updatedAt: now,
      completedAt: now,
      ...(outcome.state === 'succeeded'
        ? { result: JSON.stringify(outcome.result) }
        : { error: outcome.error.slice(0, 1000) }),
    })
    .remove(['claimToken', 'claimExpiresAt'])
    .where((attr, op) => op.eq(attr.claimToken, token))
    .go({ response: 'none' });
}

/** A passing failure: the run goes back to queued (the queue message is retried). */
async function release(run: ActionRun, token: string, error: string) {
  await ActionRunEntity.patch(runKey(run))
    .set({ state: 'queued', error: error.slice(0, 1000), updatedAt: clock.now().toISOString() })
    .remove(['claimToken', 'claimExpiresAt'])
    .where((attr, op) => op.eq(attr.claimToken, token))
    .go({ response: 'none' });
}

export async function runAction(message: ActionMessage): Promise<ActionOutcome> {
  let run = (await readActionRun(message.workspace_id, message.call_id, message.action_id)).data;
  if (!run || run.state === 'succeeded' || run.state === 'failed') return 'noop';

  if (CHARGED_ACTIONS.includes(run.type) && (run.state === 'queued' || run.state === 'held')) {
    if (!(await isInGoodStanding(run.organisationId))) {
      if (run.state === 'queued') await hold(run);
      // Billing may have recovered (and released) while we held it: ask again before leaving it.
      if (!(await isInGoodStanding(run.organisationId))) return 'held';
      run = (await readActionRun(message.workspace_id, message.call_id, message.action_id)).data;
      if (!run || (run.state !== 'queued' && run.state !== 'held')) return 'noop';
    }
  }

  const claimed = await claim(run);
  if (!claimed) {
    const fresh = (await readActionRun(message.workspace_id, message.call_id, message.action_id)).data;
    if (fresh?.state === 'running') {
      // A duplicate message is being handled: look again once its claim has lapsed.
      const wait = Math.ceil((Date.parse(fresh.claimExpiresAt ?? '') - clock.now().getTime()) / 1000) + 1;
      await sendMessage('postCallActions', message, { delaySeconds: Math.min(900, Math.max(1, wait)) });
      return 'busy';
    }
    return 'noop';
  }
  const { token } = claimed;
  const tries = (run.tries ?? 0) + 1;
  try {
    const result = await execute(run, tries >= MAX_TRIES);
    await complete(run, token, { state: 'succeeded', result });
    logger.info('post-call action done', { callId: run.callId, actionId: run.actionId, type: run.type });
    return 'succeeded';
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    const permanent =
      error instanceof PermanentActionError ||
      (error instanceof SmsSendError && error.permanent) ||
      (error instanceof HttpError && error.status < 500);
    if (permanent || tries >= MAX_TRIES) {
      await complete(run, token, { state: 'failed', error: text });
      logger.warn('post-call action failed', {
        callId: run.callId,
        actionId: run.actionId,
        type: run.type,
        error: text,
        tries,
      });
      return 'failed';
    }
    await release(run, token, text);
    throw error;
  }
}

/** Records one recipient as sent, at once (a later try of this run skips it). */
async function markSent(run: ActionRun, to: string): Promise<void> {
  await ActionRunEntity.patch(runKey(run))
    .append({ sentTo: [to] })
    .go({ response: 'none' });
}

// ── The actions ──────────────────────────────────────────────────────────────────────────────────

async function callRecord(run: ActionRun): Promise<CallRecordWire> {
  const { data } = await readPostCallRecord(run.workspaceId, run.callId);
  if (!data) throw new PermanentActionError(`no post-call record for call ${run.callId}`);
  return JSON.parse(data.record) as CallRecordWire;
}

function configOf<T extends keyof typeof ACTION_CONFIGS>(
  run: ActionRun,
  type: T,
): z.infer<(typeof ACTION_CONFIGS)[T]> {
  const parsed = ACTION_CONFIGS[type].safeParse(JSON.parse(run.config));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PermanentActionError(
      `invalid ${type} config: ${issue ? `${issue.path.join('.') || 'config'} ${issue.message}` : 'invalid'}`,
    );
  }
  return parsed.data as z.infer<(typeof ACTION_CONFIGS)[T]>;
}

const otherPartyOf = (record: CallRecordWire) =>
  record.direction === 'inbound' ? record.from_phone : record.to_phone;
const agentNumberOf = (record: CallRecordWire) =>
  record.direction === 'inbound' ? record.to_phone : record.from_phone;

function templateValues(record: CallRecordWire): Record<string, string | undefined> {
  return {
    ...record.parameters,
    agent_name: record.agent_name ?? undefined,
    summary: record.summary,
    caller: otherPartyOf(record),
    duration: formatDuration(record.duration_seconds),
    sentiment: record.sentiment.label,
  };
}

const DEFAULT_OWNER_SMS = 'Call {{caller}} ({{duration}}): {{summary}}';
const DEFAULT_CALLER_SMS =
  'Thanks for speaking with {{agent_name}}. Reply to this message if there is anything else we can help with.';

async function sendChargedSms(
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
  return {
    sms_id: run.smsId,
    to,
    provider_message_id: receipt.messageId,
    segments: charge.segments,
    credits: charge.credits,
  };
}

async function execute(run: ActionRun, lastTry: boolean): Promise<unknown> {
  const record = await callRecord(run);
  switch (run.type) {
    case 'sms_owner': {
      const config = configOf(run, 'sms_owner');
      return sendChargedSms(run, record, config.to, config.message ?? DEFAULT_OWNER_SMS, lastTry);
    }
    case 'sms_caller': {
      const config = configOf(run, 'sms_caller');
      const to = normalisePhone(otherPartyOf(record));
      if (!to) throw new PermanentActionError('the caller has no phone number an SMS can go to');
      return sendChargedSms(run, record, to, config.message ?? DEFAULT_CALLER_SMS, lastTry);
    }
    case 'email_summary': {
      const config = configOf(run, 'email_summary');
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
    }
    case 'webhook': {
      const config = configOf(run, 'webhook');
      if (!run.deliveryId) throw new PermanentActionError('the run has no delivery id');
      const payload = webhookPayload('call.ended', record, record.ended_at ?? record.created_at);
      const delivery = await startDelivery({
        workspaceId: run.workspaceId,
        organisationId: run.organisationId,
        deliveryId: run.deliveryId,
        eventType: 'call.ended',
        callId: run.callId,
        agentId: run.agentId,
        actionId: run.actionId,
        url: config.url,
        payload: JSON.stringify(payload),
        kind: 'post_call',
      });
      return { delivery_id: delivery.deliveryId, webhook_id: delivery.webhookId };
    }
    case 'contact_update': {
      configOf(run, 'contact_update');
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
      const emailOutcome = email
        ? await setEmailIfFree(run.workspaceId, contact.contactId, email)
        : undefined;
      const counted = await recordCallOnContact(run.workspaceId, contact.contactId, {
        callId: run.callId,
        at: record.ended_at ?? record.created_at,
        sentiment: record.sentiment.label,
        summary: record.summary,
      });
      return {
        contact_id: contact.contactId,
        created,
        call_counted: counted.counted,
        ...(emailOutcome ? { email: emailOutcome } : {}),
      };
    }
    case 'profile_enrichment': {
      configOf(run, 'profile_enrichment');
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
      const emailOutcome = email
        ? await setEmailIfFree(run.workspaceId, contact.contactId, email)
        : undefined;
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
    }
  }
}

function nameFromParameters(parameters: Record<string, string>): string | undefined {
  const full = parameters.name ?? parameters.full_name;
  if (full?.trim()) return full.trim();
  const joined = [parameters.first_name, parameters.last_name].filter((p) => p?.trim()).join(' ');
  return joined || undefined;
}

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
