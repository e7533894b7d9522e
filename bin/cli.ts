/**
 * `npm run cli -- <command>` against the running local stack (`npm start`); `npm run cli -- --help`
 * lists every command with its options (the table: lib/tools/cli/commands.ts). Logs go to stderr, so stdout
 * carries only the result.
 */
import '../lib/local/node-version-warning.js';
import { runCli } from '../lib/tools/cli/commands.js';

runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  log: (line) => process.stderr.write(`[cli] ${line}\n`),
}).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`[cli] ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
