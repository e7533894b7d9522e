import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './paths.js';

/** The dashboard's sources (web/) and its build (web/dist, `npm run build:web`). */
export const WEB_DIR = join(repoRoot, 'web');
export const WEB_DIST = join(WEB_DIR, 'dist');

/** What a build depends on: the sources, the build config and the installed packages. */
const BUILD_INPUTS = [
  join(WEB_DIR, 'src'),
  join(WEB_DIR, 'index.html'),
  join(WEB_DIR, 'vite.config.ts'),
  join(repoRoot, 'package-lock.json'),
];

/** The newest modification among the files at `path` (a folder's own time not counted). */
function newestChange(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestChange(join(path, entry)));
  return newest;
}

/** Whether web/dist is missing or older than something it is built from. */
export function webBuildIsStale(): boolean {
  const built = join(WEB_DIST, 'index.html');
  if (!existsSync(built)) return true;
  const builtAt = statSync(built).mtimeMs;
  return BUILD_INPUTS.some((input) => newestChange(input) > builtAt);
}

/**
 * Builds the dashboard (`npm run build:web`) when web/dist is missing or stale: `npm start` and
 * `cdk synth` call this, so neither serves or deploys an old build. Throws when the build fails.
 */
export async function ensureWebBuild(log: (line: string) => void = () => undefined): Promise<void> {
  if (!webBuildIsStale()) return;
  log('building the dashboard (web/dist is missing or older than web/src): npm run build:web');
  const output: Buffer[] = [];
  const child = spawn('npm', ['run', '--silent', 'build:web'], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
  const code = await new Promise<number | null>((resolveExit, reject) => {
    child.once('error', reject);
    child.once('close', resolveExit);
  });
  if (code !== 0)
    throw new Error(`npm run build:web failed (exit ${code}):\n${Buffer.concat(output).toString('utf8')}`);
}

/** What /config.json tells the page: where the API, the sign-in and the test-chat relay are. */
export interface WebConfig {
  api_base: string;
  oidc_authority: string;
  client_id: string;
  relay_url: string;
  logout_url: string;
  scope: string;
}

/**
 * The dashboard's Content-Security-Policy: scripts and styles only from the site itself (no inline
 * script or style attribute sheets), and connections only to the API, the sign-in and the relay.
 */
export function dashboardCsp(options: { connect: string[]; media: string[] }): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self' ${options.connect.join(' ')}`.trim(),
    `media-src 'self' blob: ${options.media.join(' ')}`.trim(),
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

export interface WebSite {
  /** Answers GET/HEAD for the dashboard: /config.json, a built file, else index.html (the SPA's routes). */
  handle(req: IncomingMessage, res: ServerResponse, path: string): void;
}

/** Paths the dashboard never answers: the API, the provider webhooks (/webhooks/…), the local endpoints, the public pages. */
const NOT_DASHBOARD = /^\/(api|_local|r)(\/|$)|^\/webhooks\//;

export const servedByDashboard = (method: string, path: string): boolean =>
  (method === 'GET' || method === 'HEAD') && !NOT_DASHBOARD.test(path);

export function webSite(options: { dist?: string; config: () => WebConfig; csp: () => string }): WebSite {
  const dist = options.dist ?? WEB_DIST;
  const send = (
    res: ServerResponse,
    req: IncomingMessage,
    status: number,
    type: string,
    body: Buffer,
    cache: string,
  ) => {
    res.writeHead(status, {
      'content-type': type,
      'content-length': String(body.length),
      'cache-control': cache,
      'content-security-policy': options.csp(),
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  return {
    handle(req, res, path) {
      if (path === '/config.json') {
        send(res, req, 200, TYPES['.json'], Buffer.from(JSON.stringify(options.config())), 'no-store');
        return;
      }
      const index = join(dist, 'index.html');
      if (!existsSync(index)) {
        const message = 'The dashboard is not built: run npm run build:web (npm start builds it).';
        send(res, req, 503, 'text/plain; charset=utf-8', Buffer.from(message), 'no-store');
        return;
      }
      let decoded: string;
      try {
        decoded = decodeURIComponent(path);
      } catch {
        decoded = '/';
      }
      const file = normalize(join(dist, decoded));
      const inside = !relative(dist, file).startsWith('..') && file.startsWith(dist + sep);
      if (inside && extname(file) !== '' && existsSync(file) && statSync(file).isFile()) {
        // Vite names built assets by content hash: cache them for good; anything else briefly.
        const immutable = file.startsWith(join(dist, 'assets') + sep);
        send(
          res,
          req,
          200,
          TYPES[extname(file)] ?? 'application/octet-stream',
          readFileSync(file),
          immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        );
        return;
      }
      if (extname(decoded) !== '' && !decoded.endsWith('.html')) {
        send(res, req, 404, 'text/plain; charset=utf-8', Buffer.from('Not found'), 'no-store');
        return;
      }
      send(res, req, 200, TYPES['.html'], readFileSync(index), 'no-cache');
    },
  };
}

// `node --import tsx lib/local/web.ts`: builds the dashboard when stale (the test harness runs this
// before it starts its stack, so the build does not count against the stack's start).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  ensureWebBuild((line) => process.stderr.write(`${line}\n`)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
