import { webhookUrlEnv } from './resources.js';
import { config } from './config.js';

/**
 * The public URL of one of our provider webhooks (`/webhooks/telephony/voice`, …): in the cloud the
 * function URL the stack passed in; locally the gateway's base URL and the path.
 */
export function providerWebhookUrl(path: `/webhooks/${string}`): string {
  const fromStack = process.env[webhookUrlEnv(path)];
  if (fromStack) return fromStack;
  const base = config().WEBHOOKS_BASE_URL ?? config().PUBLIC_BASE_URL;
  return `${base.replace(/\/$/, '')}${path}`;
}
