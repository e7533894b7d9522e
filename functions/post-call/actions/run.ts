import { randomUUID } from 'node:crypto';
import { isInGoodStanding } from '../../billing/standing.js';
import { clock } from '../../platform/clock.js';
import { HttpError } from '../../platform/errors.js';
import { logger } from '../../platform/logger.js';
import { sendMessage } from '../../platform/queue.js';
import {
  batchGetStoredItems,
  entityKey,
  entityWrite,
  isConditionFailure,
  writeStoredItems,
  type StoredItem,
} from '../../platform/table.js';
import { SmsSendError } from '../../providers/sms/index.js';
import {
  ActionRunEntity,
  ACTION_TYPES,
  CHARGED_ACTIONS,
  moveLegacyPostCall,
  PostCallRecordEntity,
  postCallService,
  readActionRun,
  type ActionRun,
  type ActionType,
  type PostCallRecordItem,
} from '../entities.js';
import { ACTION_CONFIGS, type ActionMessage, type CallRecordWire } from '../schemas.js';
import {
  PermanentActionError,
  runKey,
  type ActionConfig,
  type PostCallAction,
  type WrittenAction,
} from './action.js';
import { ACTIONS, WRITTEN_ACTIONS } from './registry.js';

/**
 * Step 2 of the pipeline (postCallActions queue): one action of one call. Each run is a small state
 * machine — queued → (held →) running → succeeded | failed — moved by conditional writes, so a
 * redelivered or duplicated message never sends an SMS, an email or a webhook twice. The actions
 * themselves are one file each in this folder, named in registry.ts.
 *
 * A written action (the webhook: registry.ts WRITTEN_ACTIONS) is not claimed first: its effect (the
 * delivery) and the run's result are one transaction, conditioned on the run being free, the way a
 * claim is. The run and the call's record are read together, once.
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

/**
 * The run and the call's record in one read, with what a written action of the type the message names
 * needs (`reads`).
 */
async function readRunAndRecord(message: ActionMessage): Promise<{
  run: ActionRun | undefined;
  record: CallRecordWire | undefined;
  extra: { type: ActionType; items: (StoredItem | undefined)[] } | undefined;
}> {
  const { workspace_id: workspaceId, call_id: callId, action_id: actionId } = message;
  const type = ACTION_TYPES.find((t) => t === message.action_type);
  const load = type ? WRITTEN_ACTIONS[type] : undefined;
  const extraKeys = type && load ? (await load()).reads(workspaceId) : [];
  const read = () =>
    batchGetStoredItems([
      entityKey(ActionRunEntity.get({ workspaceId, callId, actionId }).params()),
      entityKey(PostCallRecordEntity.get({ workspaceId, callId }).params()),
      ...extraKeys,
    ]);
  let [runItem, recordItem, ...extraItems] = await read();
  // A run made before runs had their call's key (until `migrate calls` has run): moved, then read.
  if (!runItem && (await moveLegacyPostCall(workspaceId, callId)))
    [runItem, recordItem, ...extraItems] = await read();
  const run = runItem ? (ActionRunEntity.parse({ Item: runItem }).data as ActionRun | null) : null;
  const stored = recordItem
    ? (PostCallRecordEntity.parse({ Item: recordItem }).data as PostCallRecordItem | null)
    : null;
  return {
    run: run ?? undefined,
    record: stored ? (JSON.parse(stored.record) as CallRecordWire) : undefined,
    extra: type && extraKeys.length > 0 ? { type, items: extraItems } : undefined,
  };
}

/** The run was taken by another message (or finished meanwhile): look again later, or nothing to do. */
async function taken(message: ActionMessage): Promise<ActionOutcome> {
  const fresh = (await readActionRun(message.workspace_id, message.call_id, message.action_id)).data;
  if (fresh?.state === 'running') {
    // A duplicate message is being handled: look again once its claim has lapsed.
    const wait = Math.ceil((Date.parse(fresh.claimExpiresAt ?? '') - clock.now().getTime()) / 1000) + 1;
    await sendMessage('postCallActions', message, { delaySeconds: Math.min(900, Math.max(1, wait)) });
    return 'busy';
  }
  return 'noop';
}

export async function runAction(message: ActionMessage): Promise<ActionOutcome> {
  const read = await readRunAndRecord(message);
  let run = read.run;
  if (!run || run.state === 'failed') return 'noop';
  const written = WRITTEN_ACTIONS[run.type];
  if (run.state === 'succeeded') {
    // A redelivery: what followed the transaction (the first attempt) may have been stopped by a crash.
    const { busyUntil } = written ? await (await written()).resume(run) : {};
    if (!busyUntil) return 'noop';
    // Being made now: look again once its claim has lapsed.
    const wait = Math.ceil((busyUntil.getTime() - clock.now().getTime()) / 1000) + 1;
    await sendMessage('postCallActions', message, { delaySeconds: Math.min(900, Math.max(1, wait)) });
    return 'busy';
  }
  if (written && run.state !== 'held')
    return runWritten(message, run, read.record, read.extra?.type === run.type ? read.extra.items : []);

  if (CHARGED_ACTIONS.includes(run.type) && (run.state === 'queued' || run.state === 'held')) {
    if (!(await isInGoodStanding(run.organisationId))) {
      if (run.state === 'queued') await hold(run);
      // Billing may have recovered (and released) while we held it: ask again before leaving it.
      if (!(await isInGoodStanding(run.organisationId))) return 'held';
      run = (await readActionRun(message.workspace_id, message.call_id, message.action_id)).data ?? undefined;
      if (!run || (run.state !== 'queued' && run.state !== 'held')) return 'noop';
    }
  }

  const claimed = await claim(run);
  if (!claimed) return taken(message);
  const { token } = claimed;
  const tries = (run.tries ?? 0) + 1;
  try {
    const result = await execute(run, read.record, tries >= MAX_TRIES);
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
      logFailed(run, text, tries);
      return 'failed';
    }
    await release(run, token, text);
    throw error;
  }
}

function logFailed(run: ActionRun, error: string, tries: number) {
  logger.warn('post-call action failed', {
    callId: run.callId,
    actionId: run.actionId,
    type: run.type,
    error,
    tries,
  });
}

/**
 * A written action: its effect and the run's result in one transaction, conditioned as a claim is
 * (queued, or running under a claim that lapsed), so it is made once however often the message comes.
 */
async function runWritten(
  message: ActionMessage,
  run: ActionRun,
  record: CallRecordWire | undefined,
  read: (StoredItem | undefined)[],
): Promise<ActionOutcome> {
  const action = await writtenAs(run.type);
  const nowIso = clock.now().toISOString();
  const finish = (outcome: { state: 'succeeded'; result: unknown } | { state: 'failed'; error: string }) =>
    ActionRunEntity.patch(runKey(run))
      .set({
        state: outcome.state,
        updatedAt: nowIso,
        completedAt: nowIso,
        ...(outcome.state === 'succeeded'
          ? { result: JSON.stringify(outcome.result) }
          : { error: outcome.error.slice(0, 1000) }),
      })
      .add({ tries: 1 })
      .remove(['claimToken', 'claimExpiresAt'])
      .where(
        (attr, op) =>
          `${op.eq(attr.state, 'queued')} OR (${op.eq(attr.state, 'running')} AND ${op.lt(attr.claimExpiresAt, nowIso)})`,
      );
  const tries = (run.tries ?? 0) + 1;
  let effect: ReturnType<typeof action.prepare>;
  try {
    if (!record) throw new PermanentActionError(`no post-call record for call ${run.callId}`);
    effect = action.prepare({ run, record, config: configOf(run, run.type) }, read);
  } catch (error) {
    if (!(error instanceof PermanentActionError)) throw error;
    try {
      await finish({ state: 'failed', error: error.message }).go({ response: 'none' });
    } catch (refused) {
      if (isConditionFailure(refused)) return taken(message);
      throw refused;
    }
    logFailed(run, error.message, tries);
    return 'failed';
  }
  const outcome = await writeStoredItems([
    entityWrite('Update', finish({ state: 'succeeded', result: effect.result }).params()),
    ...effect.items,
  ]);
  if (outcome.canceled) {
    if (outcome.codes[0] === 'ConditionalCheckFailed') return taken(message);
    if (!outcome.codes.slice(1).includes('ConditionalCheckFailed'))
      throw new Error(`post-call action ${run.actionId}: transaction canceled (${outcome.codes.join(', ')})`);
    // The effect was made by an earlier try (outside such a transaction): make sure of it, then finish.
    const result = await effect.fallback();
    try {
      await finish({ state: 'succeeded', result }).go({ response: 'none' });
    } catch (refused) {
      if (isConditionFailure(refused)) return taken(message);
      throw refused;
    }
  } else {
    await effect.afterWrite();
  }
  logger.info('post-call action done', { callId: run.callId, actionId: run.actionId, type: run.type });
  return 'succeeded';
}

async function writtenAs<T extends ActionType>(type: T): Promise<WrittenAction<T>> {
  const load = WRITTEN_ACTIONS[type] as (() => Promise<WrittenAction<T>>) | undefined;
  if (!load) throw new Error(`${type} is not a written action`);
  return load();
}

// ── Running one action ───────────────────────────────────────────────────────────────────────────

function configOf<T extends ActionType>(run: ActionRun, type: T): ActionConfig<T> {
  const parsed = ACTION_CONFIGS[type].safeParse(JSON.parse(run.config));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PermanentActionError(
      `invalid ${type} config: ${issue ? `${issue.path.join('.') || 'config'} ${issue.message}` : 'invalid'}`,
    );
  }
  return parsed.data as ActionConfig<T>;
}

/** The run's action, with the call's record and its config (an invalid config is a permanent failure). */
async function execute(
  run: ActionRun,
  record: CallRecordWire | undefined,
  lastTry: boolean,
): Promise<unknown> {
  if (!record) throw new PermanentActionError(`no post-call record for call ${run.callId}`);
  return executeAs(run.type, run, record, lastTry);
}

async function executeAs<T extends ActionType>(
  type: T,
  run: ActionRun,
  record: CallRecordWire,
  lastTry: boolean,
): Promise<unknown> {
  const action: PostCallAction<T> = await ACTIONS[type]();
  return action({ run, record, config: configOf(run, type), lastTry });
}
