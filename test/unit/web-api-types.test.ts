/**
 * web/src/api/schema.d.ts (the dashboard's typed client) is generated from the OpenAPI document
 * (`npm run web:api-types`): regenerated here in memory, it must be exactly the committed file, so a
 * route or schema change without regenerating fails.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { renderWebApiTypes, WEB_API_TYPES_FILE } from '../../lib/tools/cli/web-api-types.js';

describe('web/src/api/schema.d.ts', () => {
  it('is up to date with the route declarations (npm run web:api-types)', async () => {
    const committed = readFileSync(
      fileURLToPath(new URL(`../../${WEB_API_TYPES_FILE}`, import.meta.url)),
      'utf8',
    );
    const rendered = await renderWebApiTypes();
    expect(committed.includes("'/api/v1/workspaces/{workspace_id}/agents'")).toBe(true);
    expect(committed === rendered).toBe(true);
  });
});
