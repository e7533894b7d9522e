/**
 * `npm start`: the whole service on this machine, with no AWS account. See lib/local/stack.ts.
 *
 * Environment: PORT (gateway, default 3000; 0 = any free port), LOCAL_STATE_DIR (default .local),
 * LOCAL_IN_MEMORY=1 (DynamoDB in memory), LOCAL_VISIBILITY_TIMEOUT_SECONDS (default 5),
 * LOCAL_POLLER_CONCURRENCY (default 1), LOCAL_SCHEDULER=off, LOCAL_DEMO=off (no demo organisation;
 * lib/tools/cli/demo.ts), LOCAL_WEB=off (no dashboard at `/`; otherwise web/dist is built first when missing or
 * stale, lib/local/web.ts), LOCAL_EXIT_WITH_PARENT=<pid> (stop when
 * that process is gone: the test harness), LOCAL_BACKGROUND_NICE (the work process's priority, default
 * 10; 0: normal), LLM_BASE_URL / LLM_MODEL / LLM_API_KEY (your own OpenAI-compatible model server
 * instead of the model simulator; docs/language-model.md), LLM_SIMULATOR_CHUNK_DELAY_MS and
 * LLM_SIMULATOR_SLOW_MS (the simulator's test triggers), plus the handlers' own variables (POWERTOOLS_LOG_LEVEL,
 * SIMULATOR_TIME_SCALE, WEBHOOK_ALLOWED_HOSTS, WEBHOOK_RETRY_SCHEDULE, CALL_RECONCILE_AFTER_SECONDS
 * (15 s locally: a call without news that long is looked up at the provider by the sweeper)…).
 *
 * It runs as three processes: this one, fauxqs's and the work process (lib/local/background.ts).
 * Local only: `GET /_local/quiescence` on the gateway tells whether everything has settled (queues
 * drained, no consumer or simulator at work; lib/local/quiescence.ts) — tests wait for it — and
 * `GET /_local/metrics` what the handlers asked of DynamoDB and SQS, and the CPU used
 * (lib/local/metrics.ts).
 */
import '../lib/local/node-version-warning.js';
import { demoBanner, demoWanted, ensureDemo } from '../lib/tools/cli/demo.js';
import { LocalStackError } from '../lib/local/errors.js';
import { banner, startLocalStack, stopOnSignals, type LocalStack } from '../lib/local/stack.js';
import { isProcessAlive } from '../lib/local/state.js';
import { cliCommand } from '../lib/local/paths.js';

let stack: LocalStack | undefined;

/** Ends the stack when the process that started it disappears (e.g. jest killed without teardown). */
function exitWithParent(): void {
  const parent = Number(process.env.LOCAL_EXIT_WITH_PARENT);
  if (!Number.isInteger(parent) || parent <= 0) return;
  const timer = setInterval(() => {
    if (isProcessAlive(parent)) return;
    clearInterval(timer);
    process.stderr.write(`[local] parent process ${parent} is gone: stopping\n`);
    void (stack ? stack.stop() : Promise.resolve()).finally(() => process.exit(0));
  }, 1000);
  timer.unref();
}

async function main(): Promise<void> {
  exitWithParent();
  // Until the stack is up, a signal just ends the process (java is killed on exit).
  const early = () => process.exit(130);
  process.once('SIGINT', early);
  process.once('SIGTERM', early);

  stack = await startLocalStack({ defaults: { POWERTOOLS_LOG_LEVEL: 'INFO' } });

  process.off('SIGINT', early);
  process.off('SIGTERM', early);
  stopOnSignals(stack, () => process.stdout.write('stopped\n'));
  process.stdout.write(`${banner(stack.state, demoWanted() ? await demoLines(stack.state) : [])}\n`);
}

/** The demo organisation's lines for the banner; a stack without one still runs (the reason printed). */
async function demoLines(state: LocalStack['state']): Promise<string[]> {
  try {
    return demoBanner(
      await ensureDemo(state, (line) => process.stdout.write(`[local] demo                 ${line}\n`)),
    );
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return [
      `  No demo data: ${reason}`,
      `  Make it with: ${cliCommand(process.env, { silent: true })} seed --json`,
    ];
  }
}

main().catch((error: unknown) => {
  const message =
    error instanceof LocalStackError
      ? error.message
      : `The local stack failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
  process.stderr.write(`${message}\n`, () => process.exit(1));
});
