/**
 * Dependencies point one way (docs/architecture.md). Every `.ts` file under functions/ is read as text,
 * its import specifiers are found with a regular expression and resolved to repository paths, and
 * each import is checked against three rules:
 *
 *   (a) functions/ imports nothing outside functions/ (no lib/, bin/ or test/: they import functions/,
 *       never the reverse);
 *   (b) the AWS SDK (`@aws-sdk/…`) is imported only in platform/ and providers/;
 *   (c) a domain imports only itself and the domains below it in LAYERS.
 *
 * Composition points — a domain's handlers/ and http.ts, and the files directly under functions/
 * (api-routes.ts) — sit above every domain: they are where a higher domain's function is handed to a
 * lower one as a callback or port, so they may import any domain. Nothing but another composition
 * point imports them. No AWS, no local services and no environment are needed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FUNCTIONS = 'functions';

/**
 * The layers, lowest first: a domain may import the domains before it, never those after it. Keep in
 * step with docs/architecture.md. A new folder under functions/ must be placed here (the test fails
 * until it is).
 */
const LAYERS = [
  'platform', // the kernel: HTTP, auth, table, queue, storage, secrets, ids, clock, config, logging
  'providers', // ports and adapters: telephony, payments, sms, email
  'access', // organisations, workspaces, members, invitations, roles
  'billing', // credits ledger, plans, subscriptions, standing, extra numbers
  'developer', // API keys (gated by the plan's features)
  'webhook-deliveries', // outbound customer webhooks: signing, retries, delivery log, endpoint disabling
  'agents', // agents, their settings and post-call action configuration
  'numbers', // phone numbers and their link to agents
  'calling', // start-call, dispatch, the call lifecycle, the call log
  'contacts', // contacts and their profiles (a family that grows: lists, imports, campaigns' audiences)
  'knowledge', // knowledge bases of listings and documents, their search index (post-call reads listing addresses)
  'conversation', // the voice runtime: the conversation engine, its relay transport and the test chat
  'post-call', // the post-call pipeline and its actions
  'integrations', // CRM integrations: connect, sync (listings into knowledge, contacts merged), listing.sold
  'campaigns', // batch outbound campaigns: uploads, the dialer (calling window, DNC, retries, caps)
  'sms', // SMS: direct messages, campaigns, the inbox, opt-out, hot-reply alerts (above contacts and post-call)
  // later families go here, above the core: campaigns, sms, knowledge, integrations, workflows, analytics
  'analytics', // call analytics from the counters calling keeps on write
  'evaluations', // agent evaluations: scripted simulated calls, judged, charged at start
  'recordings', // the public recording page (short codes, SMS replies): above calling and sms
  'workflows', // workflows and their runs: above every family whose services a task uses (calling, sms, contacts)
  'public', // health, OpenAPI document, API reference
  'inbound-webhooks', // provider webhooks (identity, payments, telephony voice): entry points only
] as const;

/** Platform and providers may use the AWS SDK; every other domain goes through them. */
const AWS_SDK_ALLOWED = new Set<string>(['platform', 'providers']);

interface SourceFile {
  /** Repository-relative, forward slashes: `functions/billing/ledger.ts`. */
  file: string;
  domain: string;
  composition: boolean;
  specifiers: string[];
}

const STATIC_IMPORT = /^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm;
const SIDE_EFFECT_IMPORT = /^\s*import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC_IMPORT = /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The module specifiers a source file imports (static, re-exports, side effects, dynamic). */
function importSpecifiers(source: string): string[] {
  const found = new Set<string>();
  for (const pattern of [STATIC_IMPORT, SIDE_EFFECT_IMPORT, DYNAMIC_IMPORT]) {
    for (const match of source.matchAll(pattern)) found.add(match[1]);
  }
  return [...found];
}

const toPosix = (p: string) => p.split(path.sep).join('/');

function walk(dir: string): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return walk(rel);
    return entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/** `functions/<domain>/…` → domain; a file directly under functions/ → `(root)`. */
function domainOf(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? parts[1] : '(root)';
}

function isComposition(file: string): boolean {
  const parts = file.split('/');
  return parts.length === 2 || parts[2] === 'handlers' || (parts.length === 3 && parts[2] === 'http.ts');
}

function sourceFiles(): SourceFile[] {
  return walk(FUNCTIONS).map((file) => ({
    file,
    domain: domainOf(file),
    composition: isComposition(file),
    specifiers: importSpecifiers(readFileSync(path.join(REPO_ROOT, file), 'utf8')),
  }));
}

/** A relative specifier → the repository-relative file it names (`.js` → `.ts`, folders → index.ts). */
function resolve(from: string, specifier: string): string {
  const target = toPosix(path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier)));
  const candidates = [target.replace(/\.js$/, '.ts'), target, `${target}.ts`, `${target}/index.ts`];
  return candidates.find((c) => existsSync(path.join(REPO_ROOT, c))) ?? target;
}

const rank = (domain: string): number => (LAYERS as readonly string[]).indexOf(domain);
const TOP = Number.POSITIVE_INFINITY;

function layerOf(file: string): number {
  return isComposition(file) ? TOP : rank(domainOf(file));
}

interface Violation {
  rule: 'outside-functions' | 'aws-sdk' | 'layer' | 'unresolved';
  from: string;
  to: string;
}

function violations(files: SourceFile[]): Violation[] {
  const found: Violation[] = [];
  for (const source of files) {
    for (const specifier of source.specifiers) {
      if (specifier.startsWith('@aws-sdk/')) {
        if (!AWS_SDK_ALLOWED.has(source.domain))
          found.push({ rule: 'aws-sdk', from: source.file, to: specifier });
        continue;
      }
      if (!specifier.startsWith('.')) continue; // a package
      const target = resolve(source.file, specifier);
      if (!target.startsWith(`${FUNCTIONS}/`)) {
        found.push({ rule: 'outside-functions', from: source.file, to: target });
        continue;
      }
      if (!existsSync(path.join(REPO_ROOT, target))) {
        found.push({ rule: 'unresolved', from: source.file, to: target });
        continue;
      }
      if (domainOf(target) === source.domain && !isComposition(target)) continue;
      if (layerOf(target) > layerOf(source.file))
        found.push({ rule: 'layer', from: source.file, to: target });
    }
  }
  return found;
}

const show = (list: Violation[]) => list.map((v) => `${v.from} -> ${v.to}`);

describe('dependencies point one way', () => {
  const files = sourceFiles();
  const all = violations(files);

  test('the checker sees the tree', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.reduce((n, f) => n + f.specifiers.length, 0)).toBeGreaterThan(500);
  });

  test('every folder under functions/ has a place in LAYERS', () => {
    const domains = readdirSync(path.join(REPO_ROOT, FUNCTIONS), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(domains.filter((d) => rank(d) < 0)).toEqual([]);
    expect(LAYERS.filter((d) => !domains.includes(d))).toEqual([]);
  });

  test('(a) functions/ imports nothing from lib/ (or anything else outside functions/)', () => {
    expect(show(all.filter((v) => v.rule === 'outside-functions'))).toEqual([]);
  });

  test('(b) the AWS SDK is imported only in platform/ and providers/', () => {
    expect(show(all.filter((v) => v.rule === 'aws-sdk'))).toEqual([]);
  });

  test('(c) no domain imports a domain above it (or a composition point)', () => {
    expect(show(all.filter((v) => v.rule === 'layer'))).toEqual([]);
  });

  test('every relative import names a file that exists', () => {
    expect(show(all.filter((v) => v.rule === 'unresolved'))).toEqual([]);
  });
});

describe('the checker itself', () => {
  const file = (name: string, specifiers: string[]): SourceFile => ({
    file: name,
    domain: domainOf(name),
    composition: isComposition(name),
    specifiers,
  });

  test('reads static, re-exported, side-effect and dynamic imports, not calls named `from`', () => {
    const source = [
      "import { a } from './a.js';",
      'import {',
      '  b,',
      "} from '../b.js';",
      "export * from './c.js';",
      "import './d.js';",
      "const e = await import('./e.js');",
      "const f = Array.from('xyz');",
    ].join('\n');
    expect(importSpecifiers(source).sort()).toEqual(['../b.js', './a.js', './c.js', './d.js', './e.js']);
  });

  test('flags an import upwards, from lib/ and of the SDK outside the bottom layer', () => {
    const found = violations([
      file('functions/billing/ledger.ts', ['../agents/entities.js', '../access/entities.js']),
      file('functions/agents/service.ts', ['../../lib/cloud/catalog.js', '@aws-sdk/client-sqs']),
      file('functions/platform/table.ts', ['@aws-sdk/client-dynamodb']),
      file('functions/billing/handlers/x.ts', ['../../post-call/held-actions.js']),
      file('functions/billing/renewal.ts', ['./handlers/renew-credits.js']),
    ]).map((v) => `${v.rule} ${v.from} -> ${v.to}`);
    expect(found).toEqual([
      'layer functions/billing/ledger.ts -> functions/agents/entities.ts',
      'outside-functions functions/agents/service.ts -> lib/cloud/catalog.ts',
      'aws-sdk functions/agents/service.ts -> @aws-sdk/client-sqs',
      'layer functions/billing/renewal.ts -> functions/billing/handlers/renew-credits.ts',
    ]);
  });
});
