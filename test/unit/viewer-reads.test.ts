/**
 * A viewer's GET is never answered "Viewers have read-only access": that message is for writes. Every
 * GET of a workspace or organisation authorises a read action (`write: false` in the table of
 * functions/access/authorization.ts), so a refusal there names who may instead. Read from each route's
 * handler (`handlers/<route-name>.ts`, the layout of docs/conventions.md).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { apiRoutes } from '../../functions/api-routes.js';
import { PERMISSIONS, type Action } from '../../functions/access/authorization.js';

const FOLDERS: Partial<Record<string, string>> = {
  startCall: 'calling',
  webhookDeliveries: 'webhook-deliveries',
};
const kebab = (name: string) => name.replace(/([A-Z])/g, '-$1').toLowerCase();

const reads = Object.entries(apiRoutes).flatMap(([domain, routes]) =>
  Object.entries(routes)
    .filter(([, route]) => route.method === 'GET' && /\{(workspace|organisation)_id\}/.test(route.path))
    .map(([name]) => [name, `functions/${FOLDERS[domain] ?? domain}/handlers/${kebab(name)}.ts`] as const),
);

describe('GETs of a workspace or organisation authorise a read', () => {
  it('covers the GET routes', () => expect(reads.length).toBeGreaterThan(40));

  it.each(reads)('%s', (_name, file) => {
    const source = readFileSync(fileURLToPath(new URL(`../../${file}`, import.meta.url)), 'utf8');
    const actions = [...source.matchAll(/'([a-z_]+:[a-z_]+)'/g)]
      .map((match) => match[1])
      .filter((action): action is Action => action in PERMISSIONS);
    expect(actions.length).toBeGreaterThan(0);
    expect(actions.filter((action) => PERMISSIONS[action].write)).toEqual([]);
  });
});
