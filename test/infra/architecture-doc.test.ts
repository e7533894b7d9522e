import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * docs/architecture.md names every file of functions/conversation/ (its rooms, every file): a file
 * added without a word there fails here.
 */
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const conversation = path.join(root, 'functions/conversation');

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesUnder(path.join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [path.relative(conversation, path.join(dir, entry.name))]
        : [],
  );

test('docs/architecture.md names every file of functions/conversation/', () => {
  const doc = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## `functions/conversation/`'));
  const unnamed = filesUnder(conversation).filter((file) => {
    const name = path.basename(file);
    const room = path.dirname(file);
    return !(
      section.includes(`\`${file}\``) ||
      (section.includes(`\`${name}\``) && (room === '.' || section.includes(`\`${room}/\``)))
    );
  });
  expect(unnamed).toEqual([]);
});
