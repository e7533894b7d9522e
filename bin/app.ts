/**
 * The CDK app (`npx cdk synth`, `npx cdk deploy`): one stack built from lib/cloud/catalog.ts, checked by
 * cdk-nag's AWS Solutions rules (an unsuppressed finding fails the synth).
 *
 * Context (`-c key=value`): stackName (default VoiceAgentService), telephonyProvider (simulator|twilio,
 * default simulator), webhookAllowedHosts, webhookRetrySchedule, emailFrom (sender of every email);
 * the voice agents' language model: llmModel (a Bedrock model or cross-region inference profile id,
 * default DEFAULT_BEDROCK_MODEL of functions/providers/llm), llmProvider (bedrock|openai, default
 * bedrock), llmBaseUrl (required for openai: an OpenAI-compatible server that needs no API key);
 * apiGatewayCloudWatchRole (default true; false when the account already has API Gateway's logging role);
 * authDomainPrefix (the Cognito hosted UI's domain prefix, default voice-agent-<account>); alarmEmail
 * (where the alarm topic e-mails; no subscription when unset, docs/operations.md); twilioApiKeySid and
 * twilioTwimlAppSid (browser voice calls through Twilio's Voice SDK, docs/deploy.md); relayThrottleRate and
 * relayThrottleBurst (the voice relay stage's frames a second and burst, default DEFAULT_RELAY_THROTTLE:
 * docs/scale.md). The dashboard
 * (web/) is built first when web/dist is missing or stale.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { LanguageModelSettings } from '../lib/cloud/constructs/language-model.js';
import { DEFAULT_RELAY_THROTTLE } from '../lib/cloud/constructs/voice-relay-api.js';
import { DEFAULT_BEDROCK_MODEL } from '../functions/providers/llm/index.js';
import { ensureWebBuild } from '../lib/local/web.js';
import { VoiceAgentStack } from '../lib/cloud/stack.js';

const app = new App();

const context = (key: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  return value === undefined || value === null ? undefined : String(value);
};

// The dashboard deployed is the one in web/: built here when web/dist is missing or stale.
await ensureWebBuild((line) => process.stderr.write(`${line}\n`));

const telephonyProvider = context('telephonyProvider') ?? 'simulator';
if (telephonyProvider !== 'simulator' && telephonyProvider !== 'twilio') {
  throw new Error(`context telephonyProvider must be simulator or twilio, not ${telephonyProvider}`);
}

const llmProvider = context('llmProvider') ?? 'bedrock';
let languageModel: LanguageModelSettings;
if (llmProvider === 'bedrock') {
  languageModel = { provider: 'bedrock', model: context('llmModel') ?? DEFAULT_BEDROCK_MODEL };
} else if (llmProvider === 'openai') {
  const baseUrl = context('llmBaseUrl');
  const model = context('llmModel');
  if (!baseUrl || !model) throw new Error('context llmProvider=openai needs llmBaseUrl and llmModel');
  languageModel = { provider: 'openai', model, baseUrl };
} else {
  throw new Error(`context llmProvider must be bedrock or openai, not ${llmProvider}`);
}

// Browser voice calls through Twilio (docs/deploy.md): the API key's SID and the TwiML App's, together.
const twilioApiKeySid = context('twilioApiKeySid');
const twilioTwimlAppSid = context('twilioTwimlAppSid');
if ((twilioApiKeySid === undefined) !== (twilioTwimlAppSid === undefined))
  throw new Error('context twilioApiKeySid and twilioTwimlAppSid go together');
if (twilioApiKeySid && !/^SK[0-9a-fA-F]{32}$/.test(twilioApiKeySid))
  throw new Error('context twilioApiKeySid must be an API key SID (SK…)');
if (twilioTwimlAppSid && !/^AP[0-9a-fA-F]{32}$/.test(twilioTwimlAppSid))
  throw new Error('context twilioTwimlAppSid must be a TwiML App SID (AP…)');
/** A whole number of requests a second, at least 1 (API Gateway's throttle settings), or the default. */
const throttleSetting = (key: string, fallback: number): number => {
  const value = context(key);
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) {
    throw new Error(`context ${key} must be a whole number of requests a second (1 or more), not ${value}`);
  }
  return number;
};
const relayThrottle = {
  rateLimit: throttleSetting('relayThrottleRate', DEFAULT_RELAY_THROTTLE.rateLimit),
  burstLimit: throttleSetting('relayThrottleBurst', DEFAULT_RELAY_THROTTLE.burstLimit),
};
const piiDetector = context('piiDetector') ?? 'local';
if (piiDetector !== 'local' && piiDetector !== 'comprehend') {
  throw new Error(`context piiDetector must be local or comprehend, not ${piiDetector}`);
}

new VoiceAgentStack(app, context('stackName') ?? 'VoiceAgentService', {
  description: 'Voice agent service: control plane API, webhooks, queues and jobs',
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  telephonyProvider,
  webhookAllowedHosts: context('webhookAllowedHosts'),
  webhookRetrySchedule: context('webhookRetrySchedule'),
  emailFrom: context('emailFrom'),
  languageModel,
  piiDetector,
  apiGatewayCloudWatchRole: context('apiGatewayCloudWatchRole') !== 'false',
  authDomainPrefix: context('authDomainPrefix'),
  alarmEmail: context('alarmEmail'),
  ...(twilioApiKeySid && twilioTwimlAppSid
    ? { twilioWebCall: { apiKeySid: twilioApiKeySid, twimlAppSid: twilioTwimlAppSid } }
    : {}),
  relayThrottle,
});

Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));

app.synth();
