import { api, baseUrl } from '../../helpers/http.js';
import { ws } from '../calling/fixtures.js';
import { ageRecording, loseRecording, recordedCall } from './fixtures.js';

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
