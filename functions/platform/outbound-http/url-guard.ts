import { isIP } from 'node:net';
import { isAllowedHost } from './allow-list.js';
import { refusalReason } from './http-attempt.js';
import { allowedHosts, requireHttps } from './settings.js';

/**
 * The check a customer URL passes when it is saved (webhook endpoints, agents' tools): pure rules
 * and the allow-list, no I/O. Names are checked again when each request connects (http-attempt.ts),
 * after DNS, which also covers names that resolve to internal addresses.
 */

export const MAX_URL_LENGTH = 2048;

/**
 * Why a URL cannot be a webhook endpoint, or undefined: an http(s) URL (https only in the cloud, as
 * the post-call webhook's), without credentials, and not a literal loopback, private or link-local
 * address unless WEBHOOK_ALLOWED_HOSTS names it (names are checked when each attempt connects, by
 * http-attempt.ts, which also covers names that resolve to such addresses).
 */
export function endpointUrlProblem(url: string): string | undefined {
  if (url.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters`;
  const refusal = refusalReason(url, { requireHttps: requireHttps() });
  if (refusal === 'invalid URL') return 'url must be a URL';
  if (refusal === 'only https URLs are allowed') return 'url must be an https URL';
  if (refusal) return 'url must be an http(s) URL';
  const parsed = new URL(url);
  if (parsed.username || parsed.password) return 'url must not carry credentials';
  if (isInternalHost(parsed.hostname) && !isAllowedHost(parsed, allowedHosts())) {
    return 'url must not point to a loopback, private or link-local address';
  }
  return undefined;
}

export function isInternalHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const version = isIP(host);
  if (version === 4) {
    const [a = 0, b = 0] = host.split('.').map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127)
    );
  }
  if (version === 6) {
    return (
      host === '::' ||
      host === '::1' ||
      /^f[cd]/.test(host) ||
      /^fe[89ab]/.test(host) ||
      host.startsWith('::ffff:')
    );
  }
  return false;
}
