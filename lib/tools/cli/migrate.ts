import cliProgress from 'cli-progress';
import type { StackState } from '../../local/state.js';

/**
 * `npm run cli -- migrate calls`: moves call items written before the calls were sharded, and the
 * per-call items that left a busy workspace's or organisation's key (functions/table-migration.ts) — on the running local stack's table, or with `--table` on a
 * deployed one, with the AWS credentials and region of the environment (docs/operations.md).
 */
export interface MigrateTarget {
  state?: StackState;
  table?: string;
  region?: string;
}

export interface MigrateResult {
  scanned: number;
  moved: number;
  in_place: number;
}

export async function migrateCallsCommand(
  target: MigrateTarget,
  input: { restart: boolean; showProgress: boolean },
  log: (line: string) => void,
): Promise<MigrateResult> {
  if (target.table) {
    process.env.STAGE = 'cloud';
    process.env.TABLE_NAME = target.table;
    if (target.region) process.env.AWS_REGION = target.region;
  } else if (target.state) {
    for (const [name, value] of Object.entries(target.state.env)) process.env[name] = value;
  }
  // Imported once the environment names the table: the table's client reads it once.
  const { migrateCalls } = await import('../../../functions/table-migration.js');
  const { describeTable } = await import('./migrate-table.js');
  const total = await describeTable();
  log(`migrating the calls of ${process.env.TABLE_NAME} (about ${total} items to read)`);
  const bar = input.showProgress
    ? new cliProgress.SingleBar(
        {
          format: 'migrating calls [{bar}] {percentage}% | {value}/{total} items read | {moved} moved',
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  bar?.start(Math.max(total, 1), 0, { moved: 0 });
  const progress = await migrateCalls({
    restart: input.restart,
    onPage: (p) => bar?.update(Math.min(p.scanned, Math.max(total, p.scanned)), { moved: p.moved }),
  });
  bar?.stop();
  return { scanned: progress.scanned, moved: progress.moved, in_place: progress.inPlace };
}

export const describeMigration = (result: MigrateResult): string =>
  `Calls migrated: ${result.moved} moved, ${result.in_place} already in place (${result.scanned} items read).`;
