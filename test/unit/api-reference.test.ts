/**
 * docs/api.md is generated from the route declarations (`npm run docs:api`): regenerated here in memory,
 * it must be exactly the committed file, so a route, schema or summary change without regenerating
 * fails.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { apiRoutes } from '../../functions/api-routes.js';
import { API_REFERENCE_FILE, renderApiReference } from '../../lib/cli/api-reference.js';

const committed = readFileSync(
  fileURLToPath(new URL(`../../${API_REFERENCE_FILE}`, import.meta.url)),
  'utf8',
);

describe('docs/api.md', () => {
  it('is up to date with the route declarations (npm run docs:api)', async () => {
    const rendered = await renderApiReference();
    // A readable failure first: the routes that are missing, then the whole text.
    const headings = (text: string) => text.split('\n').filter((line) => line.startsWith('#### '));
    expect(headings(committed)).toEqual(headings(rendered));
    expect(committed === rendered).toBe(true);
  });

  it('has every declared route, under its domain, with its auth and success status', () => {
    for (const [domain, routes] of Object.entries(apiRoutes)) {
      const section = committed.split(`\n### ${domain}\n`)[1]?.split('\n### ')[0] ?? '';
      for (const route of Object.values(routes)) {
        const entry = section.split(`#### \`${route.method} ${route.path}\``)[1]?.split('\n#### ')[0];
        expect({ route: `${route.method} ${route.path}`, documented: entry !== undefined }).toEqual({
          route: `${route.method} ${route.path}`,
          documented: true,
        });
        expect(entry).toContain('- Auth: ');
        expect(entry).toContain('- Success: `');
        if (route.scope) expect(entry).toContain(`\`${route.scope}\``);
      }
    }
  });

  it('describes the common error shapes', () => {
    expect(committed).toContain('## Errors');
    expect(committed).toContain('`{"error":"…"}`');
    expect(committed).toMatch(/\| 422 +\| Validation error/);
  });
});
