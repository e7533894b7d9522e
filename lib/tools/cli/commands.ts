import { existsSync, readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { defaultStateDir } from '../../local/paths.js';
import { readStackState, stackStatePath, type StackState } from '../../local/state.js';
import { requestAccessToken } from '../../local/tokens.js';
import { ApiClient } from './api-client.js';
import { describeCampaign, watchCampaign } from './campaign.js';
import { describeInboundCall, receiveCall } from './call.js';
import { CRM_USAGE, crmCommand } from './crm.js';
import { demoPath } from './demo.js';
import { describeImport, importContacts } from './imports.js';
import { describeMigration, migrateCallsCommand, type MigrateTarget } from './migrate.js';
import { seed, type SeedResult } from './seed.js';
import { describeInboundSms, receiveSms } from './sms.js';

/**
 * `npm run cli -- <command>`: every command once, in one table. `--help` is generated from it, so a
 * command added here is listed with its options. Logs go to stderr, so stdout carries only the result.
 */
export interface CliOption {
  type: 'string' | 'boolean';
  /** The value's placeholder in the help (`E164`); absent for a boolean. */
  value?: string;
  multiple?: boolean;
  /** Shown as `--name VALUE` (required) rather than `[--name VALUE]`. */
  required?: boolean;
  default?: string | boolean;
  help: string;
}

export interface CliIo {
  out: (line: string) => void;
  log: (line: string) => void;
}

type Values = Record<string, string | boolean | string[] | undefined>;

export interface CliCommand {
  /** `seed`, or `call receive` for a command with a subcommand. */
  name: string;
  /** Positional arguments after the name, as shown (`FILE`). */
  positionals?: string;
  summary: string;
  options: Record<string, CliOption>;
  /** Runs without a local stack when it returns a number (`migrate calls --table`: a deployed table). */
  withoutStack?(values: Values, io: CliIo): Promise<number> | undefined;
  /** Lines shown instead of the generated usage (a command with several subcommands: crm). */
  usage?: string[];
  run(
    input: { state: StackState; values: Values; positionals: string[]; args: string[] },
    io: CliIo,
  ): Promise<number>;
}

const json: CliOption = { type: 'boolean', default: false, help: 'print the result as one JSON line' };
const workspace: CliOption = {
  type: 'string',
  value: 'WS',
  help: "the workspace (default: the demo's, from <state folder>/demo.json)",
};
const email: CliOption = {
  type: 'string',
  value: 'E',
  help: "act as this user (default: the demo's owner); a new address is a new user outside the demo organisation",
};
const token: CliOption = { type: 'string', value: 'T', help: 'act with this access token' };

export const commands: CliCommand[] = [
  {
    name: 'seed',
    summary: 'a new demo organisation: workspace, two agents, two numbers, an API key',
    options: {
      plan: { type: 'string', value: 'free|starter|growth|scale', default: 'growth', help: 'its plan' },
      json,
    },
    async run({ state, values }, { out, log }) {
      const result = await seed(state, { plan: values.plan as string }, log);
      out(values.json ? JSON.stringify(result) : describeSeed(result));
      return 0;
    },
  },
  {
    name: 'demo',
    positionals: '[FIELD]',
    summary:
      'the demo `npm start` made (<state folder>/demo.json, LOCAL_STATE_DIR or .local): all of it, or one field (workspace_id, api_key, owner_email…)',
    options: {},
    async run({ state, positionals }, { out, log }) {
      const demo = readDemoFile(state, log);
      if (!demo) return 1;
      const [field] = positionals;
      if (field === undefined) {
        out(JSON.stringify(demo, null, 2));
        return 0;
      }
      if (!(field in demo)) {
        log(`demo.json has no "${field}"; it has ${Object.keys(demo).join(', ')}`);
        return 2;
      }
      out(String(demo[field as keyof SeedResult]));
      return 0;
    },
  },
  {
    name: 'token',
    summary:
      'an access token for that user (a dashboard user: an address that is not the demo owner_email is a new user, outside the demo organisation)',
    options: { email: { ...email, required: true, help: 'the user' } },
    async run({ state, values }, { out }) {
      out(await requestAccessToken(state, values.email as string));
      return 0;
    },
  },
  {
    name: 'call receive',
    summary: 'the telephony simulator dials one of our numbers',
    options: {
      from: { type: 'string', value: 'E164', required: true, help: 'the caller' },
      to: {
        type: 'string',
        value: 'E164',
        required: true,
        help: 'our number (the demo: `demo phone_number`)',
      },
      say: {
        type: 'string',
        value: 'TEXT',
        multiple: true,
        help: 'what the caller asks the agent (repeatable)',
      },
      json,
    },
    async run({ state, values }, { out }) {
      const input = {
        from: values.from as string,
        to: values.to as string,
        says: (values.say as string[]) ?? [],
      };
      const call = await receiveCall(state, input);
      out(values.json ? JSON.stringify(call) : describeInboundCall(call, input));
      return 0;
    },
  },
  {
    name: 'call talk',
    summary:
      'be the caller: the simulator dials one of our numbers and you talk to the agent (typed lines, its reply streams back; Ctrl-D hangs up)',
    options: {
      to: {
        type: 'string',
        value: 'E164',
        required: true,
        help: 'our number (the demo: `demo phone_number`)',
      },
      from: { type: 'string', value: 'E164', default: '+61491570199', help: 'your number' },
    },
    async run({ state, values }, { log }) {
      const { talk } = await import('./talk.js');
      const result = await talk(
        state,
        { from: values.from as string, to: values.to as string },
        { input: process.stdin, output: process.stdout, log },
      );
      return result.ended === 'refused' ? 1 : 0;
    },
  },
  {
    name: 'sms receive',
    summary: 'the SMS simulator sends one of our numbers a signed inbound SMS',
    options: {
      from: { type: 'string', value: 'E164', required: true, help: 'the sender' },
      to: { type: 'string', value: 'E164', required: true, help: 'our number' },
      body: {
        type: 'string',
        value: 'TEXT',
        required: true,
        help: 'the message (STOP / START opt out and in)',
      },
      sid: { type: 'string', value: 'SM…', help: "repeat an earlier message's id (a provider's replay)" },
      json,
    },
    async run({ state, values }, { out }) {
      const input = {
        from: values.from as string,
        to: values.to as string,
        body: values.body as string,
        sid: values.sid as string | undefined,
      };
      const sms = await receiveSms(state, input);
      out(values.json ? JSON.stringify(sms) : describeInboundSms(sms, input));
      return sms.http_status === 200 ? 0 : 1;
    },
  },
  {
    name: 'import',
    positionals: 'FILE',
    summary: 'import contacts from a CSV or vCard file, with a progress bar',
    options: {
      workspace,
      email,
      token,
      format: { type: 'string', value: 'csv|vcf', help: 'default: from the file name' },
      json,
    },
    async run({ state, values, positionals }, io) {
      const [file] = positionals;
      if (!file) return usageError('import', io);
      const actor = await actingAs(state, values, io);
      if (!actor) return 1;
      const job = await importContacts(
        actor.api,
        {
          file,
          workspaceId: actor.workspaceId,
          format: values.format as string | undefined,
          showProgress: !values.json && process.stderr.isTTY,
        },
        io.log,
      );
      io.out(values.json ? JSON.stringify(job) : describeImport(job));
      return job.status === 'completed' ? 0 : 1;
    },
  },
  {
    name: 'migrate calls',
    summary:
      "move call items written before the calls were sharded to their shard's key, and the per-call items that left a workspace's or organisation's key (idempotent, resumable), with a progress bar",
    options: {
      table: {
        type: 'string',
        value: 'NAME',
        help: "a deployed table (the AWS credentials and region of the environment); default: the local stack's",
      },
      region: { type: 'string', value: 'R', help: "the deployed table's region (default: AWS_REGION)" },
      restart: {
        type: 'boolean',
        default: false,
        help: 'start over instead of where an interrupted run stopped',
      },
      json,
    },
    withoutStack(values, io) {
      if (values.table === undefined) return undefined;
      return runMigration(
        { table: values.table as string, region: values.region as string | undefined },
        values,
        io,
      );
    },
    run: ({ state, values }, io) => runMigration({ state }, values, io),
  },
  {
    name: 'campaign watch',
    positionals: 'CAMPAIGN_ID',
    summary: "a campaign's progress bar until it ends",
    options: {
      workspace,
      email,
      token,
      'until-paused': { type: 'boolean', default: false, help: 'stop when it pauses, too' },
      json,
    },
    async run({ state, values, positionals }, io) {
      const [campaignId] = positionals;
      if (!campaignId) return usageError('campaign watch', io);
      const actor = await actingAs(state, values, io);
      if (!actor) return 1;
      const result = await watchCampaign(
        actor.api,
        {
          workspaceId: actor.workspaceId,
          campaignId,
          showProgress: !values.json && process.stderr.isTTY,
          untilPaused: values['until-paused'] as boolean,
        },
        io.log,
      );
      io.out(values.json ? JSON.stringify(result) : describeCampaign(result));
      return result.campaign.status === 'completed' ? 0 : 1;
    },
  },
  {
    name: 'crm',
    summary: 'change the demo CRM as its users would (the next sync of a demo_crm integration sees it)',
    usage: CRM_USAGE.replace(/^usage: npm run cli -- /, '')
      .split(' | ')
      .map((line) => (line.startsWith('crm ') ? line : `crm ${line}`)),
    options: {},
    run: ({ state, args }, { out, log }) => crmCommand(state, args, out, log),
  },
];

/** The usage line of a command: its name, positionals and options (optional ones in brackets). */
export function usageOf(command: CliCommand): string[] {
  if (command.usage) return command.usage;
  const options = Object.entries(command.options).map(([name, option]) => {
    const text = `--${name}${option.value ? ` ${option.value}` : ''}${option.multiple ? '…' : ''}`;
    return option.required ? text : `[${text}]`;
  });
  return [[command.name, command.positionals, ...options].filter(Boolean).join(' ')];
}

/** `npm run cli -- --help`: every command with its options. */
export function helpText(): string {
  const lines = [
    'usage: npm run cli -- <command> [options]   (npm run --silent cli -- … keeps stdout to the result)',
    'The CLI talks to the running local stack: <LOCAL_STATE_DIR or .local>/stack.json (npm start writes it).',
    '',
  ];
  for (const command of commands) {
    lines.push(...usageOf(command).map((line) => `  ${line}`), `      ${command.summary}`);
    for (const [name, option] of Object.entries(command.options))
      lines.push(
        `      --${name.padEnd(14)} ${option.help}${option.default !== undefined && option.default !== false ? ` (default ${String(option.default)})` : ''}`,
      );
  }
  return lines.join('\n');
}

function usageError(name: string, { log }: CliIo): number {
  const command = commands.find((c) => c.name === name)!;
  log(`usage: npm run cli -- ${usageOf(command).join(' | ')}`);
  return 2;
}

/** Where the CLI looks for the running stack, and what to do when there is none. */
export function noStackMessage(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LOCAL_STACK_STATE) return `No running local stack at ${env.LOCAL_STACK_STATE} (LOCAL_STACK_STATE).`;
  const where = stackStatePath(defaultStateDir(env));
  return env.LOCAL_STATE_DIR
    ? `No running local stack at ${where} (LOCAL_STATE_DIR=${env.LOCAL_STATE_DIR}). Start it with the same ` +
        `variable (LOCAL_STATE_DIR=${env.LOCAL_STATE_DIR} npm start), or unset it to use .local.`
    : `No running local stack at ${where}. Start it first: npm start. A stack started with LOCAL_STATE_DIR ` +
        'is found with the same LOCAL_STATE_DIR here.';
}

function readDemoFile(state: StackState, log: (line: string) => void): SeedResult | undefined {
  const path = demoPath(state);
  if (!existsSync(path)) {
    log(`No demo at ${path}: npm start makes one unless LOCAL_DEMO=off (npm run cli -- seed makes another).`);
    return undefined;
  }
  return JSON.parse(readFileSync(path, 'utf8')) as SeedResult;
}

/** The API client and workspace a command acts with: the options given, else the demo's. */
async function actingAs(
  state: StackState,
  values: Values,
  { log }: CliIo,
): Promise<{ api: ApiClient; workspaceId: string } | undefined> {
  const given = values.workspace as string | undefined;
  const demo = given && (values.email || values.token) ? undefined : readDemoFile(state, log);
  const workspaceId = given ?? demo?.workspace_id;
  const userToken =
    (values.token as string | undefined) ??
    (values.email || demo
      ? await requestAccessToken(state, (values.email as string) ?? demo!.owner_email)
      : undefined);
  if (!workspaceId || !userToken) {
    log('Give --workspace and --email (or --token), or start the stack with its demo (npm start).');
    return undefined;
  }
  return { api: new ApiClient(state.base_url, userToken), workspaceId };
}

function describeSeed(result: SeedResult): string {
  return [
    `Demo organisation ${result.organisation_id} (plan ${result.plan})`,
    `  workspace  ${result.workspace_id}`,
    `  agent      ${result.agent_id} on ${result.phone_number}`,
    `  API key    ${result.api_key}  (scopes start_call, calls:read, agents:read)`,
    `  owner      ${result.owner_email}  (npm run cli -- token --email ${result.owner_email}: a token for the rest)`,
    '',
    'Start a call:',
    `  curl -s -X POST ${result.base_url}/api/v1/workspaces/${result.workspace_id}/agents/${result.agent_id}/start-call \\`,
    `    -H "Authorization: Bearer ${result.api_key}" -H "Content-Type: application/json" \\`,
    `    -d '{"to_phone":"+61491570156","parameters":{"name":"Sam"}}'`,
    '',
  ].join('\n');
}

/** Runs `argv` (the words after `npm run cli --`); returns the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [first, second] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    (first === undefined ? io.log : io.out)(helpText());
    return first === undefined ? 2 : 0;
  }
  const command =
    commands.find((c) => c.name === `${first} ${second}`) ?? commands.find((c) => c.name === first);
  if (!command) {
    io.log(`unknown command: ${argv.slice(0, 2).join(' ')}\n\n${helpText()}`);
    return 2;
  }
  const args = argv.slice(command.name.split(' ').length);
  if (args.includes('--help') || args.includes('-h')) {
    io.out(`usage: npm run cli -- ${usageOf(command).join('\n       npm run cli -- ')}`);
    return 0;
  }
  let parsed: { values: Values; positionals: string[] } = { values: {}, positionals: [] };
  if (!command.usage) {
    const options = Object.fromEntries(
      Object.entries(command.options).map(([name, o]) => [
        name,
        {
          type: o.type,
          ...(o.multiple ? { multiple: true } : {}),
          ...(o.default !== undefined ? { default: o.default } : {}),
        },
      ]),
    ) as ParseArgsConfig['options'];
    try {
      parsed = parseArgs({ args, options, allowPositionals: true, strict: true }) as typeof parsed;
    } catch (error) {
      io.log(error instanceof Error ? error.message : String(error));
      return usageError(command.name, io);
    }
    const missing = Object.entries(command.options).filter(
      ([name, o]) => o.required && parsed.values[name] === undefined,
    );
    if (missing.length > 0) return usageError(command.name, io);
  }
  const standalone = command.withoutStack?.(parsed.values, io);
  if (standalone) return standalone;
  const state = readStackState();
  if (!state) {
    io.log(noStackMessage());
    return 1;
  }
  return command.run({ state, values: parsed.values, positionals: parsed.positionals, args }, io);
}

async function runMigration(target: MigrateTarget, values: Values, io: CliIo): Promise<number> {
  const result = await migrateCallsCommand(
    target,
    { restart: values.restart === true, showProgress: !values.json && process.stderr.isTTY },
    io.log,
  );
  io.out(values.json ? JSON.stringify(result) : describeMigration(result));
  return 0;
}
