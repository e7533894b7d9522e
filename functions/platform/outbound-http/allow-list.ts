/**
 * The one exception to SSRF protection: `WEBHOOK_ALLOWED_HOSTS` (docs/api.md), comma-separated
 * `host:port` entries (`host:*` for any port) a customer webhook may reach although they are
 * loopback or private. The local stack sets it for its demo receiver; in the cloud it is empty.
 * Pure rules, no I/O.
 */

export interface AllowedHost {
  host: string;
  /** `*` or a port number as a string. */
  port: string;
}

const normaliseHost = (host: string): string =>
  host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');

export function parseAllowedHosts(value: string | undefined): AllowedHost[] {
  if (!value) return [];
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const separator = entry.lastIndexOf(':');
      // `host` alone (no port) means the default ports only would be surprising: require one.
      if (separator <= 0 || separator === entry.length - 1) {
        throw new Error(`WEBHOOK_ALLOWED_HOSTS entries are host:port or host:*, got "${entry}"`);
      }
      const host = normaliseHost(entry.slice(0, separator));
      const port = entry.slice(separator + 1).trim();
      if (port !== '*' && !/^\d{1,5}$/.test(port)) {
        throw new Error(`WEBHOOK_ALLOWED_HOSTS port must be a number or *, got "${entry}"`);
      }
      return { host, port };
    });
}

/** The port a URL connects to (the scheme's default when none is written). */
export function effectivePort(url: URL): string {
  if (url.port) return url.port;
  return url.protocol === 'https:' ? '443' : '80';
}

/** True when the URL's host and port are explicitly allowed (the name as written, not its address). */
export function isAllowedHost(url: URL, allowed: readonly AllowedHost[]): boolean {
  const host = normaliseHost(url.hostname);
  const port = effectivePort(url);
  return allowed.some((entry) => entry.host === host && (entry.port === '*' || entry.port === port));
}

/** Adds `host:port` to a `WEBHOOK_ALLOWED_HOSTS` value unless it is already covered. */
export function withAllowedHost(value: string | undefined, host: string, port: number): string {
  const entries = parseAllowedHosts(value);
  const url = new URL(`http://${host.includes(':') ? `[${host}]` : host}:${port}/`);
  if (isAllowedHost(url, entries)) return value ?? '';
  return [value, `${host}:${port}`].filter((part) => part !== undefined && part !== '').join(',');
}
