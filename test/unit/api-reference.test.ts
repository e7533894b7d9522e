/**
 * docs/api.md is generated from the route declarations (`npm run docs:api`): regenerated here in memory,
 * it must be exactly the committed file, so a route, schema or summary change without regenerating
 * fails.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { apiRoutes, apiTags } from '../../functions/api-routes.js';
import { API_REFERENCE_FILE, renderApiReference } from '../../lib/tools/cli/api-reference.js';

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

  it('has every declared route, under its tag, with its auth, success status and errors', () => {
    for (const [domain, routes] of Object.entries(apiRoutes)) {
      const tag = apiTags[domain as keyof typeof apiTags].name;
      const section = committed.split(`\n### ${tag}\n`)[1]?.split('\n### ')[0] ?? '';
      for (const route of Object.values(routes)) {
        const entry = section.split(`#### \`${route.method} ${route.path}\``)[1]?.split('\n#### ')[0];
        expect({ route: `${route.method} ${route.path}`, documented: entry !== undefined }).toEqual({
          route: `${route.method} ${route.path}`,
          documented: true,
        });
        expect(entry).toContain('- Auth: ');
        expect(entry).toContain('- Success: `');
        expect(entry).toContain('- Errors: ');
        expect(entry).toContain(`**${route.summary}.**`);
        if (route.scope) expect(entry).toContain(`\`${route.scope}\``);
      }
    }
  });

  /** The text of one route's entry. */
  const entryOf = (heading: string) => committed.split(`#### \`${heading}\``)[1]?.split('\n#### ')[0] ?? '';
  /** A table row of a field: `| \`name\` | type | required | notes |`, spaces collapsed. */
  const rowOf = (entry: string, field: string) =>
    entry
      .split('\n')
      .find((line) => line.startsWith(`| \`${field}\` `))
      ?.replace(/ +/g, ' ');

  it('renders unions as their variants, each with its own fields and limits', () => {
    const create = entryOf('POST /api/v1/workspaces/{workspace_id}/workflows');
    expect(rowOf(create, 'trigger')).toBe('| `trigger` | one of 2 shapes (below) | yes | |');
    expect(create).toContain('- `trigger`: `type` is `"event"`');
    expect(create).toContain('- `trigger`: `type` is `"external"`');
    // The external trigger's variant has its type only: no `event` required of it.
    const external = create.split('- `trigger`: `type` is `"external"`')[1].split('\n\n- ')[0];
    expect(external).not.toContain('trigger.event');
    // Each action has its own body limit: an SMS 1,600 characters, an email 10,000.
    const sms = create.split('`type` is `"sms"`')[1].split('\n\n- ')[0];
    const email = create.split('`type` is `"email"`')[1].split('\n\n- ')[0];
    expect(rowOf(sms, 'stages.task.action.body')).toBe(
      '| `stages.task.action.body` | string | yes | length 1–1600 |',
    );
    expect(rowOf(email, 'stages.task.action.body')).toBe(
      '| `stages.task.action.body` | string | yes | length 1–10000 |',
    );
    expect(rowOf(email, 'stages.task.action.agent_id')).toBeUndefined();
    // A knowledge item: a listing or a document, not `object`.
    const item = entryOf('POST /api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id}/items');
    expect(item).toContain('- A listing (a knowledge base of kind listings)');
    expect(item).toContain('- A document (a knowledge base of kind documents)');
    expect(rowOf(item, 'address')).toBe('| `address` | string | yes | length 1–300 |');
    expect(item.split('Response')[0]).not.toContain('Type: map of string to any');
  });

  it('shows the limits the routes enforce: contacts pages of 50, search needs q', () => {
    expect(rowOf(entryOf('GET /api/v1/workspaces/{workspace_id}/contacts'), 'limit')).toBe(
      '| `limit` | integer | no | 1–50; default `50` |',
    );
    expect(rowOf(entryOf('GET /api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id}/search'), 'q')).toBe(
      '| `q` | string | yes | length 1–1000 |',
    );
  });

  it('says what is true of the trigger route: an API key only; a JWT is 403', () => {
    const trigger = entryOf('POST /api/v1/triggers/{workflow_id}');
    expect(trigger).toContain(
      "- Auth: An API key of the workspace with scope `workflows:trigger`. A user's JWT is refused (403).",
    );
    expect(trigger).not.toMatch(/Auth: A dashboard user's JWT/);
  });

  it('describes the common error shapes', () => {
    expect(committed).toContain('## Errors');
    expect(committed).toContain('## Error statuses');
    expect(committed).toContain('`{"error":"…"}`');
    expect(committed).toMatch(/\| 422 +\| Validation error/);
  });
});
