import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Entity } from 'electrodb';
import { ENTITY_MODELS_PREVALIDATED } from '../../functions/platform/table.js';

/**
 * Bundled functions skip ElectroDB's check of each entity model (functions/platform/table.ts: it was
 * half of a cold load); the models are checked here instead, where the source runs unbundled: every
 * module that builds an entity is imported, and an invalid model throws on import.
 */
const FUNCTIONS = fileURLToPath(new URL('../../functions', import.meta.url));

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });

const entityModules = sources(FUNCTIONS).filter((file) =>
  /\bnew (Entity|Service)\(/.test(readFileSync(file, 'utf8')),
);

type Validating = { _validateModel: (model: unknown) => void };

describe('entity models', () => {
  it('are checked by ElectroDB when the source runs unbundled', () => {
    expect(ENTITY_MODELS_PREVALIDATED).toBe(false);
  });

  it('are checked in the constructor through the method the bundles replace', () => {
    const prototype = Entity.prototype as unknown as Validating;
    const original = prototype._validateModel;
    expect(typeof original).toBe('function');
    const checked: unknown[] = [];
    prototype._validateModel = function (this: unknown, model: unknown) {
      checked.push(model);
      original.call(this, model);
    };
    try {
      const model = {
        model: { entity: 'probe', version: '1', service: 'probe' },
        attributes: { id: { type: 'string', required: true } },
        indexes: { primary: { pk: { field: 'pk', composite: ['id'] }, sk: { field: 'sk', composite: [] } } },
      } as const;
      new Entity(model, { table: 'probe' });
      expect(checked).toEqual([model]);
      expect(
        () => new Entity({ ...model, attributes: 'not attributes' } as never, { table: 'probe' }),
      ).toThrow(/invalid-model/);
    } finally {
      prototype._validateModel = original;
    }
  });

  it.each(entityModules.map((file) => [path.relative(FUNCTIONS, file)]))('of %s are valid', async (file) => {
    const url = pathToFileURL(path.join(FUNCTIONS, file)).href;
    await expect(import(url)).resolves.toBeDefined();
  });
});
