import type { z } from 'zod';
import { findAgent } from '../agents/service.js';
import { AGENT_VERSION_NOT_FOUND, agentForCall, findAgentVersion } from '../agents/versions.js';
import { displayCredits } from '../billing/credits.js';
import { chargeEvaluationRun, evaluationUnits } from '../billing/metering.js';
import { clock } from '../platform/clock.js';
import { config } from '../platform/config.js';
import { conflict, notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { queryPage, type ListQuery, type Page } from '../platform/pagination.js';
import { sendMessages } from '../platform/queue.js';
import type { EvaluationMessage } from '../platform/queue-messages.js';
import { entityConfig, isConditionFailure } from '../platform/table.js';
import { playScript, ScriptedCallFailed } from '../conversation/transports/scripted.js';
import { judgeCriteria, type CriterionVerdict } from './judge.js';
import { LanguageModelError } from '../providers/llm/port.js';
import { Service } from '../platform/entity.js';
import {
  EvaluationDispatchEntity,
  EvaluationEntity,
  EvaluationResultEntity,
  type Evaluation,
  type EvaluationDispatch,
  type EvaluationResult,
} from './entities.js';
import type { CreateEvaluationBody, EvaluationResponse, ScenarioInput } from './schemas.js';

/**
 * Agent evaluations. Starting a run charges 20 credits in the same ledger transaction that creates
 * the run (billing's `alsoWrite`: no credits, no run — 402), then sends one message per scenario to
 * the `evaluations` queue. The transaction also writes a dispatch marker, kept while the run runs and
 * marked when the messages went out: should the request stop between the charge and the send, the
 * scheduled sweeper (sweepEvaluationDispatches) sends the messages of the scenarios not yet judged —
 * the run is charged once (the ledger's cause is its id) and finishes as if nothing happened; should
 * the messages be lost or dead-lettered, it sends them again after a while without progress. Each scenario is played as a scripted call through the conversation engine (the
 * agent's prompt, tools and model, as on a phone call; conversation/transports/scripted.ts) and judged:
 *
 *   A scenario passes when every phrase of its `expect` appears in what the agent said (its turns
 *   joined, compared case-insensitively with runs of white space made one space), and the language
 *   model (judge.ts) finds every one of its `criteria` met, each with a one-line reason.
 *
 * Its result is created with a condition in the same transaction that counts it done on the running
 * run, so a redelivered message judges nothing twice and a cancelled run records nothing more. The run
 * completes when every scenario is judged; cancel stops it (the charge stays: no refund); the model
 * failing during a scenario's conversation, or refusing to judge, fails it (nothing judged on apologies).
 */
export const EVALUATION_NOT_FOUND = 'Evaluation not found';
export const EVALUATION_ENDED = 'Evaluation has already ended';

const evaluationService = new Service(
  {
    evaluation: EvaluationEntity,
    evaluationResult: EvaluationResultEntity,
    evaluationDispatch: EvaluationDispatchEntity,
  },
  entityConfig(),
);

type View = z.infer<typeof EvaluationResponse>;

const normalise = (text: string): string => text.replace(/\s+/g, ' ').trim().toLowerCase();

/** The judging rule: the expected phrases the agent never said (none: the scenario passed). */
export function missingPhrases(
  expect: readonly string[],
  transcript: readonly { role: 'agent' | 'user'; text: string }[],
): string[] {
  const said = normalise(
    transcript
      .filter((turn) => turn.role === 'agent')
      .map((turn) => turn.text)
      .join('\n'),
  );
  return expect.filter((phrase) => !said.includes(normalise(phrase)));
}

export async function startEvaluation(input: {
  workspaceId: string;
  organisationId: string;
  agentId: string;
  createdBy: string;
  body: CreateEvaluationBody;
}): Promise<View> {
  const agent = await findAgent(input.workspaceId, input.agentId);
  if (!agent) throw notFound('Agent not found');
  // 404 Agent version not found (after the agent): a run plays one version, recorded at its start.
  const pinned = input.body.agent_version;
  if (pinned !== undefined && !(await findAgentVersion(input.workspaceId, input.agentId, pinned)))
    throw notFound(AGENT_VERSION_NOT_FOUND);
  const agentVersion = pinned ?? agent.version;
  const evaluationId = newId('evaluation');
  const now = clock.now().toISOString();
  const item: Evaluation = {
    workspaceId: input.workspaceId,
    agentId: input.agentId,
    evaluationId,
    organisationId: input.organisationId,
    ...(agentVersion !== undefined ? { agentVersion } : {}),
    status: 'running',
    scenarios: JSON.stringify(input.body.scenarios),
    total: input.body.scenarios.length,
    done: 0,
    createdBy: input.createdBy,
    createdAt: now,
  };
  const marker: EvaluationDispatch = {
    createdAt: now,
    evaluationId,
    workspaceId: input.workspaceId,
    agentId: input.agentId,
  };
  // 402 Insufficient credits when short: then neither the charge nor the run exists.
  await chargeEvaluationRun({
    organisationId: input.organisationId,
    evaluationId,
    alsoWrite: evaluationService.transaction
      .write(({ evaluation, evaluationDispatch }) => [
        evaluation.create(item).commit(),
        evaluationDispatch.create(marker).commit(),
      ])
      .params().TransactItems,
  });
  await dispatchScenarios(item, marker, []);
  return toView(item, []);
}

/**
 * Sends the messages of the run's scenarios not judged yet, then records on its marker when (and how
 * often, `resends`) they went out. The marker stays while the run is running: the sweeper's list.
 */
async function dispatchScenarios(
  evaluation: Pick<Evaluation, 'workspaceId' | 'agentId' | 'evaluationId' | 'total'>,
  marker: EvaluationDispatch,
  judged: readonly number[],
): Promise<number> {
  const messages: EvaluationMessage[] = [];
  for (let index = 0; index < evaluation.total; index += 1) {
    if (judged.includes(index)) continue;
    messages.push({
      type: 'evaluation.scenario',
      workspace_id: evaluation.workspaceId,
      agent_id: evaluation.agentId,
      evaluation_id: evaluation.evaluationId,
      index,
    });
  }
  if (messages.length > 0) await sendMessages('evaluations', messages);
  await EvaluationDispatchEntity.patch({ createdAt: marker.createdAt, evaluationId: marker.evaluationId })
    .set({ sentAt: clock.now().toISOString(), resends: marker.sentAt ? (marker.resends ?? 0) + 1 : 0 })
    .go({ response: 'none' })
    .catch((error: unknown) => {
      // Gone: the sweeper dropped it (the run ended meanwhile).
      if (!isConditionFailure(error)) throw error;
    });
  return messages.length;
}

/** Scenario messages sent again at most this often without the run ending; then the run fails. */
export const MAX_RESENDS = 3;
export const SCENARIOS_LOST = 'The scenarios could not be played (their messages were lost); no refund';

/**
 * Scheduled: each run's dispatch marker older than EVALUATION_DISPATCH_STALL_SECONDS —
 *   - the run ended (completed, cancelled, failed) or is gone → the marker is dropped;
 *   - its scenario messages never recorded as sent (the start stopped after the charge) → the messages
 *     of the scenarios not judged yet are sent;
 *   - sent, but no scenario judged for EVALUATION_STALL_SECONDS (the messages lost or dead-lettered) →
 *     sent again, at most MAX_RESENDS times; then the run fails (the charge stays: no refund).
 * A duplicate of a message that did arrive judges nothing twice (the result is created once).
 */
export async function sweepEvaluationDispatches(): Promise<{
  examined: number;
  dispatched: number;
  failed: number;
}> {
  const now = clock.now().getTime();
  const cutoff = new Date(now - config().EVALUATION_DISPATCH_STALL_SECONDS * 1000).toISOString();
  const stalledBefore = now - config().EVALUATION_STALL_SECONDS * 1000;
  const { data: markers } = await EvaluationDispatchEntity.query
    .byCreation({})
    .lt({ createdAt: cutoff })
    .go({ pages: 'all' });
  const report = { examined: 0, dispatched: 0, failed: 0 };
  for (const marker of markers) {
    report.examined += 1;
    try {
      const evaluation = await readEvaluation(marker.workspaceId, marker.agentId, marker.evaluationId);
      if (!evaluation || evaluation.status !== 'running') {
        await EvaluationDispatchEntity.delete(marker).go({ response: 'none' });
        continue;
      }
      if (marker.sentAt) {
        const lastProgress = Math.max(
          Date.parse(marker.sentAt),
          Date.parse(evaluation.updatedAt ?? evaluation.createdAt),
        );
        if (lastProgress > stalledBefore) continue;
        if ((marker.resends ?? 0) >= MAX_RESENDS) {
          await endRun(evaluation, 'failed', SCENARIOS_LOST);
          report.failed += 1;
          logger.error('evaluation failed: its scenarios were never played', {
            evaluationId: evaluation.evaluationId,
          });
          continue;
        }
      }
      const judged = (await readResults(evaluation.evaluationId)).map((result) => result.index);
      const sent = await dispatchScenarios(evaluation, marker, judged);
      report.dispatched += 1;
      logger.warn('evaluation scenarios sent by the sweeper', {
        evaluationId: evaluation.evaluationId,
        messages: sent,
        again: marker.sentAt !== undefined,
      });
    } catch (error) {
      logger.error('sweeping an evaluation failed; the next sweep tries again', {
        evaluationId: marker.evaluationId,
        error: String(error),
      });
    }
  }
  return report;
}

async function readEvaluation(
  workspaceId: string,
  agentId: string,
  evaluationId: string,
): Promise<Evaluation | undefined> {
  if (!isId('agent', agentId) || !isId('evaluation', evaluationId)) return undefined;
  const { data } = await EvaluationEntity.get({ workspaceId, agentId, evaluationId }).go({
    consistent: true,
  });
  return data ?? undefined;
}

async function readResults(evaluationId: string): Promise<EvaluationResult[]> {
  const { data } = await EvaluationResultEntity.query.byEvaluation({ evaluationId }).go({ pages: 'all' });
  return [...data].sort((a, b) => a.index - b.index);
}

export async function getEvaluation(
  workspaceId: string,
  agentId: string,
  evaluationId: string,
): Promise<View> {
  const evaluation = await readEvaluation(workspaceId, agentId, evaluationId);
  if (!evaluation) throw notFound(EVALUATION_NOT_FOUND);
  return toView(evaluation, await readResults(evaluationId));
}

export async function listEvaluations(
  workspaceId: string,
  agentId: string,
  query: ListQuery,
): Promise<Page<View>> {
  if (!(await findAgent(workspaceId, agentId))) throw notFound('Agent not found');
  const page = await queryPage(query.cursor, (cursor) =>
    EvaluationEntity.query
      .byAgent({ workspaceId, agentId })
      .go({ order: 'desc', count: query.limit, cursor }),
  );
  const items = await Promise.all(
    (page.items as Evaluation[]).map(async (e) => toView(e, await readResults(e.evaluationId))),
  );
  return { items, nextCursor: page.nextCursor };
}

/** Stops a running evaluation: scenarios not yet judged are never played. No refund. */
export async function cancelEvaluation(
  workspaceId: string,
  agentId: string,
  evaluationId: string,
): Promise<View> {
  const evaluation = await readEvaluation(workspaceId, agentId, evaluationId);
  if (!evaluation) throw notFound(EVALUATION_NOT_FOUND);
  const now = clock.now().toISOString();
  try {
    await EvaluationEntity.patch({ workspaceId, agentId, evaluationId })
      .set({ status: 'cancelled', endedAt: now, updatedAt: now })
      .where((attr, op) => op.eq(attr.status, 'running'))
      .go({ response: 'none' });
  } catch (error) {
    if (isConditionFailure(error)) throw conflict(EVALUATION_ENDED);
    throw error;
  }
  return getEvaluation(workspaceId, agentId, evaluationId);
}

/** Ends a running run (completed or failed); nothing when it is no longer running. */
async function endRun(
  evaluation: Pick<Evaluation, 'workspaceId' | 'agentId' | 'evaluationId' | 'total'>,
  status: 'completed' | 'failed',
  failureReason?: string,
): Promise<void> {
  const now = clock.now().toISOString();
  const { workspaceId, agentId, evaluationId } = evaluation;
  try {
    await EvaluationEntity.patch({ workspaceId, agentId, evaluationId })
      .set({ status, endedAt: now, updatedAt: now, ...(failureReason ? { failureReason } : {}) })
      .where((attr, op) =>
        status === 'completed'
          ? `${op.eq(attr.status, 'running')} AND ${op.gte(attr.done, evaluation.total)}`
          : op.eq(attr.status, 'running'),
      )
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/**
 * The `evaluations` queue: plays one scenario as a scripted call and judges it. A run that is no
 * longer running (cancelled, failed) plays nothing more; a scenario already judged is not played again.
 */
export async function runScenario(message: EvaluationMessage): Promise<'judged' | 'skipped' | 'failed'> {
  const { workspace_id: workspaceId, agent_id: agentId, evaluation_id: evaluationId, index } = message;
  const evaluation = await readEvaluation(workspaceId, agentId, evaluationId);
  if (!evaluation || evaluation.status !== 'running') return 'skipped';
  const { data: judged } = await EvaluationResultEntity.get({ evaluationId, index }).go({ consistent: true });
  if (judged) {
    await completeIfDone(evaluation);
    return 'skipped';
  }
  const scenario = (JSON.parse(evaluation.scenarios) as ScenarioInput[])[index];
  if (!scenario) return 'skipped';
  // The version the run started with, whatever the agent is now.
  const agent = await agentForCall({ workspaceId, agentId, agentVersion: evaluation.agentVersion });
  if (!agent) {
    await endRun(evaluation, 'failed', 'The agent was deleted');
    return 'failed';
  }
  // The scenario's caller talks to the agent through the conversation engine, as a phone call does.
  let call;
  try {
    call = await playScript({ agent, callerScript: scenario.caller_script });
  } catch (error) {
    if (!(error instanceof ScriptedCallFailed)) throw error; // retried by the queue
    // Nothing of the scenario is judged: the agent's side of it was apologies for the model's failure.
    logger.warn('evaluation failed: the language model failed during the scenario', {
      evaluationId,
      failure: error.detail.slice(0, 200),
    });
    await endRun(
      evaluation,
      'failed',
      `The language model failed during the scenario's conversation (${error.detail.slice(0, 200)})`,
    );
    return 'failed';
  }
  const missing = missingPhrases(scenario.expect ?? [], call.transcript);
  let verdicts: CriterionVerdict[];
  try {
    verdicts = await judgeCriteria(scenario.criteria ?? [], call.transcript);
  } catch (error) {
    if (error instanceof LanguageModelError && error.kind === 'refused') {
      logger.warn('evaluation failed: the language model refused to judge', { evaluationId });
      await endRun(
        evaluation,
        'failed',
        `The language model refused the request: ${error.message.slice(0, 200)}`,
      );
      return 'failed';
    }
    throw error; // retried by the queue
  }
  const now = clock.now().toISOString();
  const result = await evaluationService.transaction
    .write(({ evaluation: runs, evaluationResult }) => [
      evaluationResult
        .create({
          evaluationId,
          index,
          workspaceId,
          scenario: scenario.name,
          passed: missing.length === 0 && verdicts.every((v) => v.passed),
          missing,
          ...(verdicts.length > 0 ? { criteria: verdicts } : {}),
          transcript: call.transcript.map((t) => ({
            role: t.role,
            text: t.text,
            offsetSeconds: t.offsetSeconds,
          })),
          durationSeconds: call.durationSeconds,
          createdAt: now,
        })
        .commit(),
      runs
        .patch({ workspaceId, agentId, evaluationId })
        .add({ done: 1 })
        .set({ updatedAt: now })
        .where((attr, op) => op.eq(attr.status, 'running'))
        .commit(),
    ])
    .go();
  if (result.canceled) {
    const codes = result.data.map((d) => d.code ?? 'None');
    if (codes.includes('TransactionConflict')) throw new Error(`evaluation ${evaluationId}: conflict; retry`);
    return 'skipped'; // judged by a duplicate, or the run stopped meanwhile
  }
  await completeIfDone(evaluation);
  return 'judged';
}

async function completeIfDone(evaluation: Evaluation): Promise<void> {
  const fresh = await readEvaluation(evaluation.workspaceId, evaluation.agentId, evaluation.evaluationId);
  if (fresh && fresh.status === 'running' && fresh.done >= fresh.total) await endRun(fresh, 'completed');
}

export function toView(evaluation: Evaluation, results: EvaluationResult[]): View {
  return {
    id: evaluation.evaluationId,
    agent_id: evaluation.agentId,
    agent_version: evaluation.agentVersion ?? null,
    status: evaluation.status,
    total: evaluation.total,
    done: evaluation.done,
    credits: displayCredits(evaluationUnits()),
    failure_reason: evaluation.failureReason ?? null,
    results: results.map((r) => ({
      scenario: r.scenario,
      passed: r.passed,
      missing: r.missing,
      criteria: r.criteria ?? [],
      transcript: r.transcript.map((t) => ({ role: t.role, text: t.text, offset_seconds: t.offsetSeconds })),
    })),
    created_by: evaluation.createdBy,
    created_at: evaluation.createdAt,
    ended_at: evaluation.endedAt ?? null,
  };
}
