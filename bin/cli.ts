/**
 * `npm run cli -- <command>` against the running local stack (`npm start`):
 *   seed [--json] [--plan free|starter|growth|scale]   a new demo organisation (default plan: growth)
 *   token --email E                                     an access token for that user (stdout only)
 *   call receive --from E164 --to E164 [--say TEXT]… [--json]
 *                                                       the telephony simulator dials one of our numbers
 *                                                       (--say: what the caller asks the agent)
 *   call talk --to E164 [--from E164]                   be the caller: typed lines go to the agent, its
 *                                                       reply streams back; Ctrl-D hangs up
 *   sms receive --from E164 --to E164 --body TEXT [--sid SM…] [--json]
 *                                                       the SMS simulator sends one of our numbers an SMS
 *   import FILE --workspace WS (--email E | --token T) [--format csv|vcf] [--json]
 *                                                       import contacts from a CSV or vCard file
 *   campaign watch ID --workspace WS (--email E | --token T) [--until-paused] [--json]
 *                                                       a campaign's progress bar until it ends
 *   crm listings | crm sell --listing EXTERNAL_ID | crm add-contact --phone E164 [--email E] [--account A]
 *   crm contacts | crm delete-listing --listing EXTERNAL_ID | crm delete-contact --contact EXTERNAL_ID
 *                                                       change the demo CRM (lib/cli/crm.ts)
 * Logs go to stderr, so stdout carries only the result.
 */
import '../lib/local/node-version-warning.js';
import { parseArgs } from 'node:util';
import { readStackState } from '../lib/local/state.js';
import { requestAccessToken } from '../lib/local/tokens.js';
import { seed } from '../lib/cli/seed.js';
import { describeInboundCall, receiveCall } from '../lib/cli/call.js';
import { describeInboundSms, receiveSms } from '../lib/cli/sms.js';
import { ApiClient } from '../lib/cli/api-client.js';
import { describeImport, importContacts } from '../lib/cli/imports.js';
import { describeCampaign, watchCampaign } from '../lib/cli/campaign.js';
import { crmCommand } from '../lib/cli/crm.js';

const log = (line: string) => process.stderr.write(`[cli] ${line}\n`);

async function main(): Promise<number> {
  const [command, ...rest] = process.argv.slice(2);
  const state = readStackState();
  if (!state) {
    log('No running local stack found (.local/stack.json). Start it first: npm start');
    return 1;
  }
  switch (command) {
    case 'token': {
      const { values } = parseArgs({ args: rest, options: { email: { type: 'string' } } });
      if (!values.email) {
        log('usage: npm run cli -- token --email you@example.com');
        return 2;
      }
      process.stdout.write(`${await requestAccessToken(state, values.email)}\n`);
      return 0;
    }
    case 'seed': {
      const { values } = parseArgs({
        args: rest,
        options: { json: { type: 'boolean', default: false }, plan: { type: 'string', default: 'growth' } },
      });
      const result = await seed(state, { plan: values.plan ?? 'growth' }, log);
      if (values.json) {
        process.stdout.write(`${JSON.stringify(result)}\n`);
      } else {
        process.stdout.write(
          [
            `Demo organisation ${result.organisation_id} (plan ${result.plan})`,
            `  workspace  ${result.workspace_id}`,
            `  agent      ${result.agent_id} on ${result.phone_number}`,
            `  API key    ${result.api_key}`,
            '',
            'Start a call:',
            `  curl -s -X POST ${result.base_url}/api/v1/workspaces/${result.workspace_id}/agents/${result.agent_id}/start-call \\`,
            `    -H "Authorization: Bearer ${result.api_key}" -H "Content-Type: application/json" \\`,
            `    -d '{"to_phone":"+61491570156","parameters":{"name":"Sam"}}'`,
            '',
          ].join('\n'),
        );
      }
      return 0;
    }
    case 'call': {
      const [subcommand, ...args] = rest;
      const { values } = parseArgs({
        args,
        options: {
          from: { type: 'string' },
          to: { type: 'string' },
          say: { type: 'string', multiple: true },
          json: { type: 'boolean', default: false },
        },
      });
      if (subcommand === 'talk' && values.to) {
        const { talk } = await import('../lib/cli/talk.js');
        const result = await talk(
          state,
          { from: values.from ?? '+61491570199', to: values.to },
          { input: process.stdin, output: process.stdout, log },
        );
        return result.ended === 'refused' ? 1 : 0;
      }
      if (subcommand !== 'receive' || !values.from || !values.to) {
        log(
          'usage: npm run cli -- call receive --from +61491570199 --to +61255501234 [--say "Tell me about the house on Harbour Street"] [--json]\n' +
            '       npm run cli -- call talk --to +61255501234 [--from +61491570199]',
        );
        return 2;
      }
      const input = { from: values.from, to: values.to, says: values.say ?? [] };
      const call = await receiveCall(state, input);
      process.stdout.write(`${values.json ? JSON.stringify(call) : describeInboundCall(call, input)}\n`);
      return 0;
    }
    case 'sms': {
      const [subcommand, ...args] = rest;
      const { values } = parseArgs({
        args,
        options: {
          from: { type: 'string' },
          to: { type: 'string' },
          body: { type: 'string' },
          sid: { type: 'string' },
          json: { type: 'boolean', default: false },
        },
      });
      if (subcommand !== 'receive' || !values.from || !values.to || values.body === undefined) {
        log(
          'usage: npm run cli -- sms receive --from +61491570199 --to +61255501234 --body "Yes please" [--sid SM…] [--json]',
        );
        return 2;
      }
      const input = { from: values.from, to: values.to, body: values.body, sid: values.sid };
      const sms = await receiveSms(state, input);
      process.stdout.write(`${values.json ? JSON.stringify(sms) : describeInboundSms(sms, input)}\n`);
      return sms.http_status === 200 ? 0 : 1;
    }
    case 'import': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: {
          workspace: { type: 'string' },
          email: { type: 'string' },
          token: { type: 'string' },
          format: { type: 'string' },
          json: { type: 'boolean', default: false },
        },
      });
      const [file] = positionals;
      if (!file || !values.workspace || (!values.email && !values.token)) {
        log(
          'usage: npm run cli -- import FILE --workspace WS (--email OWNER_EMAIL | --token TOKEN) [--format csv|vcf]',
        );
        return 2;
      }
      const token = values.token ?? (await requestAccessToken(state, values.email!));
      const job = await importContacts(
        new ApiClient(state.base_url, token),
        {
          file,
          workspaceId: values.workspace,
          format: values.format,
          showProgress: !values.json && process.stderr.isTTY,
        },
        log,
      );
      process.stdout.write(`${values.json ? JSON.stringify(job) : describeImport(job)}\n`);
      return job.status === 'completed' ? 0 : 1;
    }
    case 'campaign': {
      const [subcommand, ...args] = rest;
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: {
          workspace: { type: 'string' },
          email: { type: 'string' },
          token: { type: 'string' },
          'until-paused': { type: 'boolean', default: false },
          json: { type: 'boolean', default: false },
        },
      });
      const [campaignId] = positionals;
      if (subcommand !== 'watch' || !campaignId || !values.workspace || (!values.email && !values.token)) {
        log(
          'usage: npm run cli -- campaign watch CAMPAIGN_ID --workspace WS (--email E | --token TOKEN) [--until-paused] [--json]',
        );
        return 2;
      }
      const token = values.token ?? (await requestAccessToken(state, values.email!));
      const result = await watchCampaign(
        new ApiClient(state.base_url, token),
        {
          workspaceId: values.workspace,
          campaignId,
          showProgress: !values.json && process.stderr.isTTY,
          untilPaused: values['until-paused'],
        },
        log,
      );
      process.stdout.write(`${values.json ? JSON.stringify(result) : describeCampaign(result)}\n`);
      return result.campaign.status === 'completed' ? 0 : 1;
    }
    case 'crm':
      return crmCommand(state, rest, (line) => process.stdout.write(`${line}\n`), log);
    default:
      log(
        'commands: seed [--json] [--plan free|starter|growth|scale], token --email E, ' +
          'call receive --from E164 --to E164 [--say TEXT] [--json], import FILE --workspace WS --email E, ' +
          'campaign watch ID --workspace WS --email E, crm listings | sell --listing ID | add-contact --phone E164 | ' +
          'contacts | delete-listing --listing ID | delete-contact --contact ID',
      );
      return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(error instanceof Error ? error.message : String(error));
    process.exit(1);
  },
);
