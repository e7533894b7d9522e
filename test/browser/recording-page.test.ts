import { chromium, type Browser, type Page } from 'playwright-core';
import { baseUrl } from '../helpers/http.js';
import { ageRecording, recordedCall, recordedCallWithReply } from '../e2e/public-page/fixtures.js';
import { chromiumPath, inCi, MISSING_CHROMIUM } from './chromium.js';

/**
 * The public recording page in a real browser: the system Chromium, driven by playwright-core, loads
 * the page from the local stack. Playable (the audio element loads and plays: its duration is known,
 * its error null, no CSP violation), unavailable (a message, no player; also when the signed URL
 * fails in the page), and not found.
 */
const executablePath = chromiumPath();
if (!executablePath && inCi()) throw new Error(`${MISSING_CHROMIUM} CI must run the browser tests.`);
if (!executablePath) console.warn(`SKIPPED test/browser: ${MISSING_CHROMIUM}`);
const describeWithBrowser = executablePath ? describe : describe.skip;

describeWithBrowser('public recording page in Chromium', () => {
  let browser: Browser;
  const violations: string[] = [];

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath,
      headless: true,
      args: ['--no-sandbox', '--autoplay-policy=no-user-gesture-required', '--mute-audio'],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function open(path: string): Promise<{ page: Page; status: number; csp: string }> {
    const page = await browser.newPage();
    page.on('console', (message) => {
      if (/Content.Security.Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    const response = await page.goto(`${baseUrl()}${path}`, { waitUntil: 'load' });
    if (!response) throw new Error(`no response for ${path}`);
    return { page, status: response.status(), csp: (await response.allHeaders())['content-security-policy'] };
  }

  it('plays a recording: the audio element loads, its duration is known and its error is null', async () => {
    const { code, call } = await recordedCall();
    const { page, status, csp } = await open(`/r/${code}`);
    expect(status).toBe(200);
    expect(csp).toContain("default-src 'none'");
    await expect(page.title()).resolves.toBe('Call recording: Riley');
    const audio = page.locator('audio#recording');
    await expect(audio.count()).resolves.toBe(1);
    await expect(audio.getAttribute('controls')).resolves.not.toBeNull();
    await expect(audio.getAttribute('aria-label')).resolves.toBe('Call recording');
    const state = await page.evaluate(async () => {
      // The page's own globals (this function runs in the browser; the project has no DOM typings).
      interface AudioElement {
        readyState: number;
        duration: number;
        currentTime: number;
        error: unknown;
        play(): Promise<void>;
        pause(): void;
        addEventListener(type: string, listener: () => void, options?: { once: boolean }): void;
      }
      const doc = (globalThis as unknown as { document: { getElementById(id: string): AudioElement } })
        .document;
      const element = doc.getElementById('recording');
      if (element.readyState < 1)
        await new Promise<void>((resolve, reject) => {
          element.addEventListener('loadedmetadata', resolve, { once: true });
          element.addEventListener('error', () => reject(new Error('audio error')), { once: true });
        });
      await element.play();
      await new Promise<void>((resolve) => {
        if (element.currentTime > 0) resolve();
        else element.addEventListener('timeupdate', resolve, { once: true });
      });
      element.pause();
      return { duration: element.duration, error: element.error, currentTime: element.currentTime };
    });
    expect(state.error).toBeNull();
    expect(Number.isFinite(state.duration)).toBe(true);
    expect(state.duration).toBeGreaterThan(0);
    expect(state.currentTime).toBeGreaterThan(0);
    expect(call.recording.duration_seconds).toBeGreaterThan(0);
    await expect(page.locator('#unavailable').isHidden()).resolves.toBe(true);
    await expect(page.locator('#no-replies').textContent()).resolves.toBe('No replies yet.');
    expect(violations).toEqual([]);
    await page.close();
  });

  it('shows the SMS replies tied to the code as text: markup in a reply is never rendered', async () => {
    const reply =
      '<img src=x onerror="document.title=1"><script>document.title="pwned"</script> Thanks & bye';
    const { code } = await recordedCallWithReply(reply);
    const { page } = await open(`/r/${code}`);
    await expect(page.locator('#replies li').count()).resolves.toBe(1);
    await expect(page.locator('#replies .reply-body').textContent()).resolves.toBe(reply);
    await expect(page.locator('#replies img, #replies script').count()).resolves.toBe(0);
    await expect(page.title()).resolves.toBe('Call recording: Riley');
    await expect(page.locator('audio#recording').count()).resolves.toBe(1);
    expect(violations).toEqual([]);
    await page.close();
  });

  it('a signed URL that fails in the page shows "unavailable", never a broken player', async () => {
    const { code } = await recordedCall();
    const page = await browser.newPage();
    // The recording's URL answers as an expired S3 presigned URL does.
    await page.route(
      (url) => url.searchParams.has('X-Amz-Signature'),
      (route) =>
        route.fulfill({
          status: 403,
          contentType: 'application/xml',
          body: '<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>',
        }),
    );
    await page.goto(`${baseUrl()}/r/${code}`);
    await page.locator('#unavailable').waitFor({ state: 'visible' });
    await expect(page.locator('#player').isHidden()).resolves.toBe(true);
    await expect(page.locator('#unavailable').textContent()).resolves.toContain('no longer available');
    await page.close();
  });

  it('a recording past its retention is shown unavailable, without a player', async () => {
    const { tenant, call, code } = await recordedCall();
    await ageRecording(tenant, call.id);
    const { page, status } = await open(`/r/${code}`);
    expect(status).toBe(200);
    await expect(page.locator('audio').count()).resolves.toBe(0);
    await expect(page.locator('#unavailable').isVisible()).resolves.toBe(true);
    await expect(page.getByRole('status').textContent()).resolves.toContain('no longer available');
    await page.close();
  });

  it('shows "Call ended <time>." on one line, the business name, and an icon the policy allows', async () => {
    const { code } = await recordedCall();
    const { page } = await open(`/r/${code}`);
    const layout = await page.evaluate(() => {
      interface Box {
        top: number;
        height: number;
      }
      interface Element {
        getBoundingClientRect(): Box;
        querySelector(selector: string): Element;
        textContent: string;
      }
      const doc = (globalThis as unknown as { document: { getElementById(id: string): Element } }).document;
      const style = (globalThis as unknown as { getComputedStyle(e: Element): { lineHeight: string } })
        .getComputedStyle;
      const ended = doc.getElementById('ended');
      return {
        text: ended.textContent,
        lineHeight: parseFloat(style(ended).lineHeight),
        height: ended.getBoundingClientRect().height,
        timeTop: ended.querySelector('time').getBoundingClientRect().top,
        top: ended.getBoundingClientRect().top,
        business: doc.getElementById('business').textContent,
      };
    });
    expect(layout.text).toMatch(/^Call ended .+ UTC\.$/);
    expect(layout.height).toBeLessThan(layout.lineHeight * 1.5);
    expect(Math.abs(layout.timeTop - layout.top)).toBeLessThan(layout.lineHeight);
    expect(layout.business).toMatch(/^Org /);
    await expect(page.locator('link[rel="icon"]').getAttribute('href')).resolves.toMatch(
      /^data:image\/svg\+xml,/,
    );
    expect(violations).toEqual([]);
    await page.close();
  });

  it('the API reference (Redoc) loads nothing from another origin and breaks no policy', async () => {
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    const refused: string[] = [];
    page.on('request', (request) => {
      const url = request.url();
      if (/^https?:/.test(url) && new URL(url).origin !== new URL(baseUrl()).origin) elsewhere.push(url);
    });
    page.on('console', (message) => {
      if (/Content.Security.Policy|Refused to/i.test(message.text())) refused.push(message.text());
    });
    await page.goto(`${baseUrl()}/api/v1/docs`, { waitUntil: 'load' });
    // The sidebar's footer, where Redoc shows its maker's logo, is rendered with the rest.
    await page.getByText('API docs by Redocly').waitFor({ timeout: 30_000 });
    await expect(
      page.locator('a[href="https://redocly.com/redoc/"] img').getAttribute('src'),
    ).resolves.toMatch(/^data:image\/svg\+xml,/);
    await page.waitForLoadState('networkidle');
    expect(elsewhere).toEqual([]);
    expect(refused).toEqual([]);
    await page.close();
  });

  it('an unknown or malformed code is the not-found page (404)', async () => {
    for (const code of ['AAAAAAAAAAAA', 'short', '%3Cscript%3Ealert(1)%3C%2Fscript%3E']) {
      const { page, status, csp } = await open(`/r/${code}`);
      expect(status).toBe(404);
      expect(csp).toContain("default-src 'none'");
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
        'Recording not found',
      );
      await expect(page.locator('audio').count()).resolves.toBe(0);
      await page.close();
    }
  });
});
