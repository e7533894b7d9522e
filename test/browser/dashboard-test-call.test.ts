import { seed, type SeedResult } from '../../lib/tools/cli/seed.js';
import type { StackState } from '../../lib/local/state.js';
import { LONG_REPLY } from '../../lib/local/simulators/llm/replies.js';
import { api, baseUrl, type Json } from '../helpers/http.js';
import { stackState } from '../helpers/stack-state.js';
import { tokenFor } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait.js';
import { DashboardBrowser, describeWithBrowser, seriousAxeViolations } from './dashboard-kit.js';

/**
 * The agent page's Test call in Chromium, with the browser transport (the local stack's): a fake
 * microphone (`--use-fake-ui-for-media-stream --use-fake-device-for-media-stream`) and the browser's
 * speech interfaces replaced by fakes before the page loads. The fake recogniser is driven by the test
 * (`__say(text, final)`); the fake synthesiser records what it was asked to speak and "speaks" each
 * utterance a word every 120 ms, with boundary events, so the page's barge-in can be exercised: the
 * caller speaking over the agent cancels its speech and tells the service the words already spoken.
 */

const FAKE_SPEECH = `(() => {
  window.__spoken = [];
  window.__heardWords = 0;
  window.__cancels = 0;
  class FakeRecognition {
    constructor() { this.lang = ''; this.continuous = false; this.interimResults = false; this.onresult = null; this.onend = null; this.onerror = null; }
    start() { window.__recognition = this; window.__recognitionLang = this.lang; window.__listening = true; }
    stop() { window.__listening = false; }
    abort() { window.__listening = false; }
  }
  window.SpeechRecognition = FakeRecognition;
  window.webkitSpeechRecognition = FakeRecognition;
  window.__say = (text, isFinal) => {
    const result = Object.assign([{ transcript: text, confidence: 0.9 }], { isFinal });
    window.__recognition.onresult({ resultIndex: 0, results: [result] });
  };
  const queue = [];
  let current = null;
  let timer = null;
  const next = () => {
    current = queue.shift() ?? null;
    if (!current) return;
    const u = current;
    window.__spoken.push({ text: u.text, lang: u.lang });
    const words = [...u.text.matchAll(/\\S+/g)];
    let i = 0;
    const step = () => {
      if (current !== u) return;
      if (i < words.length) {
        const w = words[i++];
        window.__heardWords += 1;
        if (u.onboundary) u.onboundary({ name: 'word', charIndex: w.index, charLength: w[0].length });
        timer = setTimeout(step, 120);
      } else {
        current = null;
        if (u.onend) u.onend({});
        next();
      }
    };
    step();
  };
  const synthesis = {
    get speaking() { return current !== null; },
    get pending() { return queue.length > 0; },
    speak(u) { queue.push(u); if (!current) next(); },
    cancel() { window.__cancels += 1; queue.length = 0; current = null; clearTimeout(timer); },
    getVoices() { return []; },
    pause() {}, resume() {},
    addEventListener() {}, removeEventListener() {},
  };
  Object.defineProperty(window, 'speechSynthesis', { value: synthesis, configurable: true });
})();`;

describeWithBrowser('the agent page: Test call (browser transport)', () => {
  let kit: DashboardBrowser;
  let demo: SeedResult;

  beforeAll(async () => {
    demo = await seed(stackState() as unknown as StackState, { plan: 'growth' }, () => undefined);
    kit = await DashboardBrowser.launch('dashboard-test-call', [
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
    ]);
  }, 120_000);
  afterAll(async () => {
    await kit?.close();
  });

  it('talks to the agent by voice: a final result is a prompt, the replies are spoken clause by clause, a barge-in sends the words heard, and the call opens in Calls', async () => {
    const { context, page } = await kit.signedIn(demo.owner_email, { path: `/agents/${demo.agent_id}` });
    await context.addInitScript(FAKE_SPEECH);
    await page.reload();
    await page.getByRole('button', { name: 'Test call' }).waitFor();
    const sent: Json[] = [];
    page.on('websocket', (socket) =>
      socket.on('framesent', (frame) => sent.push(JSON.parse(String(frame.payload)) as Json)),
    );

    await page.getByRole('button', { name: 'Test call' }).click();
    const panel = page.getByRole('region', { name: 'Test call' });
    await panel.getByLabel('Call parameter 1 name').fill('name');
    await panel.getByLabel('Call parameter 1 value').fill('Sam');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await kit.shot(page, 'test-call-parameters');
    await panel.getByRole('button', { name: 'Start test call' }).click();
    await panel.getByText('Connected', { exact: true }).waitFor();
    await panel.getByLabel('Call time').waitFor();
    await panel.getByRole('meter', { name: 'Microphone level' }).waitFor();
    const spoken = () => page.evaluate('window.__spoken') as Promise<{ text: string; lang: string }[]>;
    /** Until the agent has said all it was given (the caller waits for it, not speaking over it). */
    const quiet = () =>
      waitFor(
        async () =>
          (await page.evaluate('!window.speechSynthesis.speaking && !window.speechSynthesis.pending'))
            ? true
            : undefined,
        { what: 'the agent to finish speaking' },
      );

    // The greeting is spoken in the agent's language.
    await waitFor(async () => ((await spoken()).length > 0 ? true : undefined), {
      what: 'the greeting spoken',
    });
    expect((await spoken()).map((s) => s.text).join('')).toContain('Hi Sam, this is Ava');
    expect((await spoken())[0].lang).toBe('en-AU');
    expect(await page.evaluate('window.__recognitionLang')).toBe('en-AU');
    await quiet();

    // An interim result is shown greyed, and not sent; the final one is one prompt frame.
    await page.evaluate(`window.__say('When are', false)`);
    await panel.locator('.interim').getByText('When are').waitFor();
    await page.evaluate(`window.__say('When are the open homes?', true)`);
    await panel.locator('.chat-user', { hasText: 'When are the open homes?' }).waitFor();
    await waitFor(() => (sent.some((f) => f.type === 'prompt') ? true : undefined), { what: 'the prompt' });
    expect(sent.filter((f) => f.type === 'prompt')).toEqual([
      expect.objectContaining({ type: 'prompt', voicePrompt: 'When are the open homes?', last: true }),
    ]);
    const afterGreeting = (await spoken()).length;
    await waitFor(async () => ((await spoken()).length > afterGreeting ? true : undefined), {
      what: 'the reply spoken',
    });
    await kit.shot(page, 'test-call-connected');
    await quiet();

    // A long reply, spoken clause by clause as it streams; the caller speaks over it.
    const beforeLong = (await spoken()).length;
    await page.evaluate(`window.__say('Tell me everything', true)`);
    await waitFor(
      async () => {
        const now = await spoken();
        return now.length > beforeLong && now[beforeLong].text.startsWith('Of course') ? true : undefined;
      },
      { what: 'the long reply to be spoken' },
    );
    const words0 = (await page.evaluate('window.__heardWords')) as number;
    await waitFor(
      async () => (((await page.evaluate('window.__heardWords')) as number) >= words0 + 3 ? true : undefined),
      { what: 'a few words heard' },
    );
    await page.evaluate(`window.__say('Sorry', false)`);
    await waitFor(() => (sent.some((f) => f.type === 'interrupt') ? true : undefined), {
      what: 'the interrupt frame',
    });
    const interrupts = sent.filter((f) => f.type === 'interrupt');
    expect(interrupts).toHaveLength(1);
    const heard = interrupts[0].utteranceUntilInterrupt as string;
    expect(heard.length).toBeGreaterThan(0);
    expect(LONG_REPLY.startsWith(heard)).toBe(true);
    expect(heard.length).toBeLessThan(LONG_REPLY.length);
    expect(await page.evaluate('window.__cancels')).toBeGreaterThanOrEqual(1);
    // The long reply came as more than one clause, spoken as they came (not all at once at the end).
    const longPieces = (await spoken()).slice(beforeLong).map((s) => s.text);
    expect(longPieces.length).toBeGreaterThanOrEqual(1);
    expect(longPieces.join('').length).toBeLessThan(LONG_REPLY.length + 1);

    // Goodbye: the agent ends the call, and the call opens in Calls.
    await page.evaluate(`window.__say('Goodbye!', true)`);
    await page.waitForURL((url) => url.pathname.startsWith('/calls/call_'), { timeout: 30_000 });
    const callId = new URL(page.url()).pathname.split('/').pop() as string;
    const owner = await tokenFor(demo.owner_email);
    const call = await waitFor(
      async () => {
        const res = await api('GET', `/api/v1/workspaces/${demo.workspace_id}/calls/${callId}`, {
          token: owner,
        });
        return res.body.status === 'completed' && res.body.transcript?.length
          ? (res.body as Json)
          : undefined;
      },
      { what: 'the call to be completed', timeoutMs: 30_000 },
    );
    expect(call).toMatchObject({ channel: 'web', parameters: { name: 'Sam' } });
    const texts = (call.transcript as Json[]).map((t) => t.text as string);
    expect(texts).toContain('When are the open homes?');
    // What the caller heard of the cut reply is what the call keeps of it.
    expect(texts).toContain(heard);
    expect(sent.filter((f) => f.type === 'prompt').map((f) => f.voicePrompt)).toEqual([
      'When are the open homes?',
      'Tell me everything',
      'Goodbye!',
    ]);
    expect(kit.cspViolations).toEqual([]);
    expect(page.url().startsWith(baseUrl())).toBe(true);
    await context.close();
  }, 120_000);

  it('a browser without speech recognition is told so and offered the test chat', async () => {
    const { context, page } = await kit.signedIn(demo.owner_email, { path: `/agents/${demo.agent_id}` });
    await context.addInitScript('delete window.SpeechRecognition; delete window.webkitSpeechRecognition;');
    await page.reload();
    await page.getByRole('button', { name: 'Test call' }).click();
    const panel = page.getByRole('region', { name: 'Test call' });
    await panel.getByText('This browser has no speech recognition', { exact: false }).waitFor();
    expect(await panel.getByRole('button', { name: 'Start test call' }).isDisabled()).toBe(true);
    await panel.getByRole('button', { name: 'Open test chat' }).click();
    await page
      .getByRole('region', { name: 'Test chat' })
      .getByRole('button', { name: 'Start chat' })
      .waitFor();
    await context.close();
  }, 60_000);
});
