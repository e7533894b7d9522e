import { chromium, type Browser } from 'playwright-core';
import { api, baseUrl } from '../helpers/http.js';
import { emailsTo, organisation, uniqueEmail } from '../e2e/access/fixtures.js';
import { chromiumPath, inCi, MISSING_CHROMIUM } from './chromium.js';

/**
 * The API's own invitation page (`/i/{id}`, the email's link where no dashboard is served; the
 * dashboard's page is tested in dashboard-agents-webhooks.test.ts) in a real browser: it signs the invitee in
 * at the local OpenID provider and accepts; the page says the role given, and the invitee is then a member.
 */
const executablePath = chromiumPath();
if (!executablePath && inCi()) throw new Error(`${MISSING_CHROMIUM} CI must run the browser tests.`);
if (!executablePath) console.warn(`SKIPPED test/browser: ${MISSING_CHROMIUM}`);
const describeWithBrowser = executablePath ? describe : describe.skip;

describeWithBrowser('invitation page in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function invite(role: 'regular' | 'admin') {
    const org = await organisation('inviter', 'Page Co');
    const email = uniqueEmail('invitee');
    const invited = await api('POST', `/api/v1/organisations/${org.organisationId}/invitations`, {
      token: org.owner.token,
      body: { email, role },
    });
    expect(invited.status).toBe(201);
    const invitationId = invited.body.invitation_id as string;
    expect(emailsTo(email)).toHaveLength(1);
    return { org, email, link: `${baseUrl()}/i/${invitationId}`, invitationId };
  }

  const membersOf = async (org: Awaited<ReturnType<typeof invite>>['org'], email: string) =>
    (
      await api('GET', `/api/v1/organisations/${org.organisationId}/members`, { token: org.owner.token })
    ).body.items.filter((m: { email: string }) => m.email === email);

  it('signs in with the invited address and accepts: the page shows the role, the invitee is a member', async () => {
    const { org, email, link } = await invite('admin');
    const page = await browser.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Content.Security.Policy|Refused to/i.test(message.text())) refused.push(message.text());
    });
    const response = await page.goto(link);
    expect(response?.status()).toBe(200);
    await page.fill('#email', email);
    await page.fill('#password', 'any password: the local provider checks none');
    await page.click('button[type=submit]');
    await page.locator('#result').waitFor({ state: 'visible', timeout: 30_000 });
    await expect(page.locator('#result [data-role]').textContent()).resolves.toBe('an admin');
    expect(refused).toEqual([]);
    expect(await membersOf(org, email)).toEqual([
      expect.objectContaining({ role: 'admin', status: 'accepted' }),
    ]);
    await page.close();
  });

  it('another address is told so, and nothing is accepted', async () => {
    const { org, email, link } = await invite('regular');
    const page = await browser.newPage();
    await page.goto(link);
    await page.fill('#email', uniqueEmail('someone-else'));
    await page.fill('#password', 'x');
    await page.click('button[type=submit]');
    await page.locator('#error').waitFor({ state: 'visible', timeout: 30_000 });
    await expect(page.locator('#error').textContent()).resolves.toContain(
      'address the invitation was sent to',
    );
    await expect(page.locator('#result').isHidden()).resolves.toBe(true);
    expect(await membersOf(org, email)).toEqual([expect.objectContaining({ status: 'pending' })]);
    await page.close();
  });
});
