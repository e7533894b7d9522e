import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { repoRoot } from '../../lib/local/paths.js';
import { baseUrl } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { chromiumPath, inCi, MISSING_CHROMIUM } from './chromium.js';

/**
 * What the dashboard's browser tests share: the system Chromium (playwright-core), signing in through
 * the local identity provider's page, axe-core, screenshots under .local/test-output/, and the
 * one allow-list of the read-only controls a viewer's page may hold. Without Chromium the tests are skipped, except in CI.
 */
export const executablePath = chromiumPath();
if (!executablePath && inCi()) throw new Error(`${MISSING_CHROMIUM} CI must run the browser tests.`);
if (!executablePath) console.warn(`SKIPPED test/browser: ${MISSING_CHROMIUM}`);
export const describeWithBrowser = executablePath ? describe : describe.skip;

const AXE = executablePath
  ? readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
  : '';

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Until the page's loading states are gone. */
export const settled = (page: Page) =>
  waitFor(async () => (await page.locator('main [role="status"].state').count()) === 0, {
    what: 'the page to load',
  });

/**
 * The accessible names of the enabled buttons and switches in the page's main region; with `fields`,
 * its editable fields too (`field: <label>`, or `filter: <label>` in a search or filter form), so a
 * viewer's form that is only disabled shows.
 */
export async function enabledControls(page: Page, options: { fields?: boolean } = {}): Promise<string[]> {
  const controls = page.locator(
    options.fields
      ? // :enabled: also not disabled by a disabled fieldset around it.
        'main button:enabled, main [role="switch"]:not([disabled]), main input:enabled, main select:enabled, main textarea:enabled'
      : 'main button:not([disabled]), main [role="switch"]:not([disabled])',
  );
  const names: string[] = [];
  for (let i = 0; i < (await controls.count()); i += 1) {
    const control = controls.nth(i);
    const tag = await control.evaluate((e) => e.tagName.toLowerCase());
    if (tag === 'button' || (await control.getAttribute('role')) === 'switch')
      names.push(((await control.getAttribute('aria-label')) ?? (await control.textContent()) ?? '').trim());
    else if (!(await control.evaluate((e) => (e as unknown as { readOnly: boolean }).readOnly)))
      names.push(await fieldName(control));
  }
  return names;
}

interface LabelNode {
  cloneNode(deep: boolean): LabelNode;
  querySelectorAll(selector: string): ArrayLike<{ remove(): void }>;
  textContent: string | null;
}

/**
 * A field's name: `filter: <label>` inside a search or filter form, else `field: <label>`. The label
 * is its aria-label, else its <label>s' own text (a label around a select: not the options'), else its
 * id or tag.
 */
const fieldName = (control: Locator): Promise<string> =>
  control.evaluate((e) => {
    const element = e as unknown as {
      tagName: string;
      id: string;
      getAttribute(name: string): string | null;
      closest(selector: string): unknown;
      labels: ArrayLike<LabelNode> | null;
    };
    const labels = Array.from(element.labels ?? [])
      .map((label) => {
        const copy = label.cloneNode(true);
        Array.from(copy.querySelectorAll('input, select, textarea')).forEach((c) => c.remove());
        return (copy.textContent ?? '').trim();
      })
      .filter(Boolean);
    const label =
      element.getAttribute('aria-label') ??
      (labels.length > 0 ? labels.join(' ') : element.id || element.tagName.toLowerCase());
    return `${element.closest('[role="search"], .filters') ? 'filter' : 'field'}: ${label}`;
  });

/**
 * The ONE list of controls a viewer's page may hold: each reads (pages, filters, opens or closes
 * what is already there) and changes nothing. Buttons and switches by accessible name, fields as
 * `field: <label>` (`filter: <label>` in a search or filter form). A control not listed here on a viewer's page is a write control shown to a viewer.
 */
export const VIEWER_READ_ONLY_CONTROLS: readonly (string | RegExp)[] = [
  // Lists and their loading and error states.
  'Load more',
  'Try again',
  // Showing what is there.
  /^Show deliveries\b/,
  /^Hide deliveries\b/,
  /^Play\b/,
  /^Pause\b/,
  /^Seek to\b/,
  // A transcript turn's time: plays the call's recording from there.
  /^\d+:\d{2}$/,
  // The call log's export: it reads the calls page by page and saves them as a file.
  'Export CSV',
  // Filters and searches of lists (in a search or filter form), and the analytics' grouping.
  'filter: Status',
  'filter: Direction',
  'filter: Agent id',
  'filter: From date',
  'filter: To date',
  'filter: Phone',
  'filter: Search contacts',
  'filter: Contactability',
  'filter: Agent',
  'filter: Campaign',
  'filter: End reason',
  'filter: Channel',
  'filter: Answered by',
  'filter: Agent version',
  'filter: Handoffs',
  // A version's diff: the version it is compared with.
  'field: Compare with',
  'field: Group by',
  'filter: Group by',
  // A knowledge base's search.
  'filter: Search this knowledge base',
  'Search',
  // SMS campaigns picked to compare, and the comparison.
  /^field: Compare /,
  /^Compare selected\b/,
];

const allowedForViewer = (name: string): boolean =>
  VIEWER_READ_ONLY_CONTROLS.some((allowed) =>
    typeof allowed === 'string' ? allowed === name : allowed.test(name),
  );

/**
 * The enabled controls (buttons, switches and editable fields) of the page's main region that are
 * not in VIEWER_READ_ONLY_CONTROLS: for a viewer, there must be none.
 */
export async function controlsBeyondReadOnly(page: Page): Promise<string[]> {
  return (await enabledControls(page, { fields: true })).filter((name) => !allowedForViewer(name));
}

/** axe-core's serious and critical findings on the page as it is now. */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the debugging protocol: the page's CSP (no inline script) stays on.
  await page.evaluate(AXE);
  const violations = (await page.evaluate('axe.run().then((result) => result.violations)')) as AxeViolation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A Chromium for one test file, its screenshots in `.local/test-output/<folder>/`. */
export class DashboardBrowser {
  /** What the pages' consoles said about the Content-Security-Policy (a test expects none). */
  readonly cspViolations: string[] = [];

  private constructor(
    private readonly browser: Browser,
    private readonly output: string,
  ) {}

  static async launch(folder: string, extraArgs: string[] = []): Promise<DashboardBrowser> {
    const output = join(repoRoot, '.local', 'test-output', folder);
    mkdirSync(output, { recursive: true });
    const browser = await chromium.launch({
      executablePath,
      headless: true,
      args: ['--no-sandbox', '--mute-audio', ...extraArgs],
    });
    return new DashboardBrowser(browser, output);
  }

  /** A new page that records CSP complaints and accepts confirmation dialogs. */
  async newPage(width = 1280): Promise<{ context: BrowserContext; page: Page }> {
    const context = await this.browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (/Content.Security.Policy|Refused to/i.test(message.text())) this.cspViolations.push(message.text());
    });
    page.on('dialog', (dialog) => void dialog.accept());
    return { context, page };
  }

  /** Signs in on the local identity provider's page, starting at `path`, and is back on that page. */
  async signedIn(
    email: string,
    options: { path?: string; width?: number } = {},
  ): Promise<{ context: BrowserContext; page: Page }> {
    const path = options.path ?? '/agents';
    const { context, page } = await this.newPage(options.width);
    await page.goto(`${baseUrl()}${path}`);
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back from the identity provider, past the sign-in callback, on the page asked for.
    await page.waitForURL((url) => url.origin === new URL(baseUrl()).origin && url.pathname === path);
    await page.getByRole('heading', { level: 1 }).waitFor();
    return { context, page };
  }

  /**
   * Follows the main navigation's link to a page and waits until it has loaded; on a narrow screen,
   * where the navigation is behind the Menu button, opens it first.
   */
  async open(page: Page, name: string): Promise<void> {
    const link = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
    if (!(await link.isVisible())) await page.getByRole('button', { name: 'Menu' }).click();
    await link.click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    await settled(page);
  }

  shot(page: Page, name: string): Promise<Buffer> {
    return page.screenshot({
      path: join(this.output, `${name.toLowerCase().replace(/\W+/g, '-')}.png`),
      fullPage: true,
    });
  }

  /** The page has loaded without an error, axe-core finds nothing serious (when `axe`), and it is photographed. */
  async checkPage(page: Page, label: string, shotName: string, options: { axe: boolean }): Promise<void> {
    await settled(page);
    await expect(page.locator('main [role="alert"]').count()).resolves.toBe(0);
    if (options.axe)
      expect({ page: label, violations: await seriousAxeViolations(page) }).toEqual({
        page: label,
        violations: [],
      });
    await this.shot(page, shotName);
  }

  close(): Promise<void> {
    return this.browser.close();
  }
}

/** The navigation's links, in order (the contract's page names). */
export const NAV_PAGES = [
  'Agents',
  'Calls',
  'Phone numbers',
  'Contacts',
  'Campaigns',
  'SMS',
  'Knowledge',
  'Integrations',
  'Workflows',
  'Analytics',
  'Evaluations',
  'API keys',
  'Webhooks',
  'Billing',
  'Team',
];
