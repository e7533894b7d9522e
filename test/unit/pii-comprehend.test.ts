import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ComprehendPiiDetector } from '../../functions/providers/pii/comprehend.js';
import { localPiiDetector } from '../../functions/providers/pii/index.js';
import { Redactor } from '../../functions/platform/pii/redactor.js';

/**
 * The Comprehend adapter against a stand-in of its JSON API: one DetectPiiEntities request for a
 * call's lines, each entity mapped back to its line; throttled or failing, no spans (and the rules
 * still redact).
 */
let server: Server;
let url: string;
let answer: (body: { Text: string; LanguageCode: string }) => { status: number; json: unknown };
const received: { target: string | undefined; body: { Text: string; LanguageCode: string } }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(data) as { Text: string; LanguageCode: string };
      received.push({ target: req.headers['x-amz-target'] as string | undefined, body });
      const { status, json } = answer(body);
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  received.length = 0;
});

const detector = () =>
  new ComprehendPiiDetector({
    region: 'ap-southeast-2',
    endpoint: url,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    timeoutMs: 2000,
  });

test("one request for the call's lines; names and addresses mapped back to their lines", async () => {
  const lines = ['Hello, who is this?', 'I am calling for Alex Chen from 4 Rose Lane'];
  answer = (body) => {
    const name = body.Text.indexOf('Alex Chen');
    const address = body.Text.indexOf('4 Rose Lane');
    return {
      status: 200,
      json: {
        Entities: [
          { Type: 'NAME', BeginOffset: name, EndOffset: name + 9, Score: 0.99 },
          { Type: 'ADDRESS', BeginOffset: address, EndOffset: address + 11, Score: 0.98 },
          { Type: 'AGE', BeginOffset: 0, EndOffset: 2, Score: 0.9 },
        ],
      },
    };
  };
  const spans = await detector().detect(lines, 'en-AU');
  expect(received).toHaveLength(1);
  expect(received[0]!.target).toBe('Comprehend_20171127.DetectPiiEntities');
  expect(received[0]!.body.LanguageCode).toBe('en');
  expect(spans[0]).toEqual([]);
  expect(spans[1]).toEqual([
    { start: 17, end: 26, category: 'person_name' },
    { start: 32, end: 43, category: 'address' },
  ]);
  const redactor = new Redactor({ year: 2026 });
  expect(
    redactor.redactLines(
      lines.map((text) => ({ role: 'user', text })),
      spans,
    )[1]!.text,
  ).toBe('I am calling for [PERSON_NAME_1] from [ADDRESS_1]');
});

test('throttled: no spans, and the rules still redact', async () => {
  answer = () => ({ status: 400, json: { __type: 'ThrottlingException', message: 'Rate exceeded' } });
  const lines = ['my email is a.b@example.com, ask Alex Chen'];
  const spans = await detector().detect(lines, 'es-US');
  expect(received.length).toBeGreaterThanOrEqual(1);
  expect(received[0]!.body.LanguageCode).toBe('es');
  expect(spans).toEqual([[]]);
  const out = new Redactor({ year: 2026 }).redactLines([{ role: 'user', text: lines[0]! }], spans);
  expect(out[0]!.text).toBe('my email is [EMAIL_1], ask Alex Chen');
}, 30_000);

test('the local adapter finds nothing (rules and known values only)', async () => {
  await expect(localPiiDetector.detect(['Alex Chen'], 'en')).resolves.toEqual([[]]);
});
