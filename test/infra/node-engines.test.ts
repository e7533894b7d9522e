import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * `npm ci` on the Node the README names (package.json `engines.node`, its lowest version) warns of no
 * package: every package the lock installs accepts that Node. A dependency that wants a newer one is
 * pinned to a version that does through package.json `overrides` (light-my-request, under fauxqs's
 * fastify, takes cookie 1.x: cookie 2 wants Node 22).
 */
const read = (path: string) =>
  JSON.parse(readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8'));
// semver is npm's own (a dependency of the toolchain): loaded as CommonJS, typed here as used.
const semver = createRequire(import.meta.url)('semver') as {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
};

test("every locked package accepts the lowest Node of package.json's engines", () => {
  const engines = read('package.json').engines.node as string;
  const lowest = semver.minVersion(engines)!.version;
  const packages = read('package-lock.json').packages as Record<
    string,
    { version?: string; engines?: { node?: string } }
  >;
  const refusing = Object.entries(packages)
    .filter(([path, pkg]) => path !== '' && typeof pkg.engines?.node === 'string')
    .filter(([, pkg]) => !semver.satisfies(lowest, pkg.engines!.node!))
    .map(
      ([path, pkg]) =>
        `${path.replace(/^.*node_modules\//, '')}@${pkg.version} wants node ${pkg.engines!.node}`,
    );
  expect(refusing).toEqual([]);
});
