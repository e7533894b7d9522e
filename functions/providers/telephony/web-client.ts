import { SignJWT } from 'jose';
import { secretArnEnv, secretString } from '../../platform/secrets.js';
import { loadTwilioSecret } from './twilio-adapter.js';

/**
 * Browser voice calls through Twilio's Voice JavaScript SDK: the deployment's API key and TwiML App
 * (docs/deploy.md), and the Access Token a browser connects with. `TWILIO_API_KEY_SID` and
 * `TWILIO_TWIML_APP_SID` are plain settings (CDK context); the key's secret is the `twilio-api-key`
 * secret in the cloud, `TWILIO_API_KEY_SECRET` locally (where `LOCAL_WEB_CALL=twilio` asks for this
 * transport with any values: the telephony simulator checks no token). Without them, web calls use the
 * browser's own speech over the relay's web route.
 */

/** How long a token lets the browser connect (Twilio allows up to 24 h; a web call must connect in 60 s). */
export const WEB_CLIENT_TOKEN_SECONDS = 300;

/** The local stack's stand-in account SID (the simulator has no account). */
const LOCAL_ACCOUNT_SID = `AC${'0'.repeat(32)}`;

interface WebClientSettings {
  apiKeySid: string;
  twimlAppSid: string;
}

/** The Twilio web client's settings when this deployment has them; otherwise undefined (the browser transport). */
export function webClientSettings(env: NodeJS.ProcessEnv = process.env): WebClientSettings | undefined {
  const apiKeySid = env.TWILIO_API_KEY_SID?.trim();
  const twimlAppSid = env.TWILIO_TWIML_APP_SID?.trim();
  if (!apiKeySid || !twimlAppSid) return undefined;
  if (env.STAGE === 'cloud') return { apiKeySid, twimlAppSid };
  return env.LOCAL_WEB_CALL === 'twilio' && env.TWILIO_API_KEY_SECRET
    ? { apiKeySid, twimlAppSid }
    : undefined;
}

/** The identity a user's browser connects as: letters, digits and underscores only, never an e-mail. */
export function webClientIdentity(userId: string): string {
  return `user_${userId.replace(/[^A-Za-z0-9_]/g, '_')}`.slice(0, 121);
}

/** The Twilio client leg's `From` (`client:<identity>`) as its webhook receives it. */
export const webClientFrom = (userId: string): string => `client:${webClientIdentity(userId)}`;

async function apiKeySecret(): Promise<string> {
  if (process.env.STAGE === 'cloud' || process.env[secretArnEnv('twilio-api-key')]) {
    const value = (await secretString('twilio-api-key')).trim();
    // Put as the bare secret, or as {"api_key_secret": "…"}.
    if (value.startsWith('{')) {
      const parsed = JSON.parse(value) as { api_key_secret?: unknown };
      if (typeof parsed.api_key_secret === 'string' && parsed.api_key_secret) return parsed.api_key_secret;
      throw new Error('secret twilio-api-key has no api_key_secret');
    }
    return value;
  }
  const local = process.env.TWILIO_API_KEY_SECRET;
  if (!local) throw new Error('TWILIO_API_KEY_SECRET is not set');
  return local;
}

async function accountSid(): Promise<string> {
  if (process.env.TELEPHONY_PROVIDER === 'twilio') return (await loadTwilioSecret()).account_sid;
  return process.env.TWILIO_ACCOUNT_SID ?? LOCAL_ACCOUNT_SID;
}

/**
 * A Twilio Access Token for one web call: HS256 with the API key's secret (`iss` the key SID, `sub`
 * the account SID, `cty: twilio-fpa;v=1`), valid WEB_CLIENT_TOKEN_SECONDS, granting only outgoing
 * voice through the TwiML App, with the call's ids as the outgoing parameters (Twilio hands them to
 * the TwiML App's voice URL: the browser cannot name another call).
 */
export async function webClientToken(input: {
  settings: WebClientSettings;
  userId: string;
  callId: string;
  workspaceId: string;
  now: Date;
}): Promise<{ token: string; identity: string; expiresAt: Date }> {
  const { settings, now } = input;
  const identity = webClientIdentity(input.userId);
  const issuedAt = Math.floor(now.getTime() / 1000);
  const expiresAt = issuedAt + WEB_CLIENT_TOKEN_SECONDS;
  const [secret, sub] = await Promise.all([apiKeySecret(), accountSid()]);
  const token = await new SignJWT({
    grants: {
      identity,
      voice: {
        outgoing: {
          application_sid: settings.twimlAppSid,
          params: { call_id: input.callId, workspace_id: input.workspaceId },
        },
      },
    },
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT', cty: 'twilio-fpa;v=1' })
    .setJti(`${settings.apiKeySid}-${issuedAt}-${input.callId}`)
    .setIssuer(settings.apiKeySid)
    .setSubject(sub)
    .setIssuedAt(issuedAt)
    .setNotBefore(issuedAt)
    .setExpirationTime(expiresAt)
    .sign(new TextEncoder().encode(secret));
  return { token, identity, expiresAt: new Date(expiresAt * 1000) };
}
