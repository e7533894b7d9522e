import { config } from '../config.js';
import { parseAllowedHosts, type AllowedHost } from './allow-list.js';

/**
 * The outbound HTTP settings (docs/api.md): which private hosts a request to a customer's server may
 * reach, and whether it must be https. Read from the environment at use (not frozen at the first
 * config() call) because the local stack adds its demo receiver to WEBHOOK_ALLOWED_HOSTS when that
 * service starts.
 */
let allowedCache: { raw: string; hosts: AllowedHost[] } | undefined;

export function allowedHosts(): AllowedHost[] {
  const raw = process.env.WEBHOOK_ALLOWED_HOSTS ?? '';
  if (allowedCache?.raw !== raw) allowedCache = { raw, hosts: parseAllowedHosts(raw) };
  return allowedCache.hosts;
}

/** Customers' servers must be https in the cloud (docs/api.md); locally http is fine. */
export const requireHttps = (): boolean => config().STAGE === 'cloud';
