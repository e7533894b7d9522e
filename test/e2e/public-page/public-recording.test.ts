import { join } from 'node:path';
import { readSmsOutbox } from '../../../functions/providers/sms/local-outbox.js';
import { escapeHtml } from '../../../functions/recordings/page.js';
import { api, baseUrl } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { ws } from '../calling/fixtures.js';
import { ageRecording, loseRecording, recordedCall, recordedCallWithReply } from './fixtures.js';

/** The public recording page's JSON and HTML over the local stack: playable, unavailable, not found. */

const CODE = /^[0-9A-Za-z]{12}$/;

describe('public recording page', () => {
  it('a recorded call has a short link whose page plays the recording', async () => {
    const { tenant, call, code } = await recordedCall();
    expect(call.short_url).toBe(`${baseUrl()}/r/${code}`);
    expect(code).toMatch(CODE);
    // The detail shows the same link every time (one code per call).
    const again = await api('GET', `${ws(tenant)}/calls/${call.id}`, { token: tenant.owner.token });
    expect(again.body.short_url).toBe(call.short_url);

    const json = await api('GET', `/api/v1/public/recordings/${code}`);
    expect(json.status).toBe(200);
    expect(json.body).toEqual({
      id: code,
      recording: { available: true, url: expect.any(String) },
      replies: [],
    });
    const audio = await fetch(json.body.recording.url);
    expect(audio.status).toBe(200);
    const bytes = new Uint8Array(await audio.arrayBuffer());
    expect(Buffer.from(bytes.slice(0, 4)).toString('ascii')).toBe('RIFF');

    const replies = await api('GET', `/api/v1/public/recordings/${code}/replies`);
    expect(replies.status).toBe(200);
    expect(replies.body).toEqual({ id: code, items: [] });

    const page = await api('GET', `/r/${code}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = page.headers['content-security-policy'];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'sha256-[^']+'/);
    expect(csp).toContain(`media-src ${new URL(json.body.recording.url).origin}`);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.text).toContain('<audio id="recording" controls');
    expect(page.text).toContain('No replies yet.');
    expect(page.text).toContain('Call recording: Riley');
  });

  it('names the business, ends its time line with the time, and has an icon its policy allows', async () => {
    const { tenant, code } = await recordedCall();
    const page = await api('GET', `/r/${code}`);
    expect(page.status).toBe(200);
    expect(page.text.match(/<p class="business" id="business">([^<]*)<\/p>/)?.[1]).toBe(
      // The test tenant's organisation is named after its owner (calling/fixtures.ts newTenant).
      escapeHtml(`Org ${tenant.owner.email}`),
    );
    // The time is inline: "Call ended <time>…</time>." is one line (only the replies' times are blocks).
    expect(page.text).toMatch(/<p id="ended">Call ended <time datetime="[^"]+">[^<]+ UTC<\/time>\.<\/p>/);
    expect(page.text).not.toMatch(/(^|[{}])time\{[^}]*display:block/);
    const icon = page.text.match(/<link rel="icon" type="image\/svg\+xml" href="([^"]+)">/)?.[1];
    expect(icon).toMatch(/^data:image\/svg\+xml,/);
    expect(page.headers['content-security-policy']).toContain('img-src data:');
  });

  it('the caller’s SMS reply to the post-call SMS (which carried the link) is tied to the code, escaped on the page', async () => {
    const reply = '<script>alert("x")</script> Thanks & <b>see you</b>';
    const { call, code } = await recordedCallWithReply(reply);
    const json = await api('GET', `/api/v1/public/recordings/${code}`);
    expect(json.body.recording.available).toBe(true);
    expect(json.body.replies).toEqual([{ body: reply, received_at: expect.any(String) }]);
    const replies = await api('GET', `/api/v1/public/recordings/${code}/replies`);
    expect(replies.body).toEqual({ id: code, items: json.body.replies });
    const page = await api('GET', `/r/${code}`);
    expect(page.text).toContain(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; Thanks &amp; &lt;b&gt;see you&lt;/b&gt;',
    );
    expect(page.text).not.toContain('<script>alert');
    expect(page.text).not.toContain('<b>see you');
    // The SMS carried the link, and said that replies show on that page.
    expect(call.short_url).toContain(`/r/${code}`);
    const sent = readSmsOutbox(join(stackState().env.LOCAL_STATE_DIR, 'outbox', 'sms.jsonl')).filter(
      (sms) => sms.to === call.to_phone && sms.text.includes(call.short_url),
    );
    expect(sent).toHaveLength(1);
    expect(sent[0].text).toContain('your replies appear on that page');
    // Replies are the code's own: another recorded call shows none.
    const other = await recordedCall();
    expect((await api('GET', `/api/v1/public/recordings/${other.code}/replies`)).body.items).toEqual([]);
  });

  it('a recording past its retention, or whose source is gone, is unavailable (replies still answered)', async () => {
    const aged = await recordedCall();
    await ageRecording(aged.tenant, aged.call.id);
    const lost = await recordedCall();
    await loseRecording(lost.tenant, lost.call.id);
    for (const { code } of [aged, lost]) {
      const json = await api('GET', `/api/v1/public/recordings/${code}`);
      expect(json.status).toBe(200);
      expect(json.body).toEqual({ id: code, recording: { available: false, url: null }, replies: [] });
      const page = await api('GET', `/r/${code}`);
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('<audio');
      expect(page.text).toContain('This recording is no longer available');
      expect(page.headers['content-security-policy']).toContain("media-src 'none'");
    }
  });

  it.each([
    ['unknown', 'AAAAAAAAAAAA'],
    ['too short', 'abc'],
    ['too long', 'abcdefghijklm'],
    ['wrong alphabet', 'abcdef-ghijk'],
    ['markup', '%3Cscript%3E'],
  ])('a code that is %s is 404 Recording not found and the not-found page', async (_what, code) => {
    const json = await api('GET', `/api/v1/public/recordings/${code}`);
    expect(json.status).toBe(404);
    expect(json.body).toEqual({ error: 'Recording not found' });
    const replies = await api('GET', `/api/v1/public/recordings/${code}/replies`);
    expect(replies.status).toBe(404);
    const page = await api('GET', `/r/${code}`);
    expect(page.status).toBe(404);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('<h1>Recording not found</h1>');
    expect(page.text).not.toContain('<script>alert');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
  });
});
