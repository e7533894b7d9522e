import { existsSync } from 'node:fs';

/**
 * The system Chromium the browser tests drive with playwright-core (no browser download): CHROMIUM_PATH,
 * or the Debian/Ubuntu packages' paths. In CI (`CI` set) a missing browser fails the run; elsewhere the
 * browser tests are skipped, and say so.
 */
const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/lib/chromium/chromium',
  '/snap/bin/chromium',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
];

export function chromiumPath(): string | undefined {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) {
    if (!existsSync(configured)) throw new Error(`CHROMIUM_PATH=${configured} does not exist`);
    return configured;
  }
  return CANDIDATES.find((candidate) => existsSync(candidate));
}

export const inCi = (): boolean =>
  process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

export const MISSING_CHROMIUM =
  'Chromium not found (set CHROMIUM_PATH, or install it: apt-get install -y chromium). ' +
  'The browser tests of the public recording page need it.';
