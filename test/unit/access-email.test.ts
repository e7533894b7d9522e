import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  emailOutboxPath,
  LocalOutboxEmailSender,
  readEmailOutbox,
} from '../../functions/providers/email/local-outbox.js';
import { EmailSendError } from '../../functions/providers/email/port.js';
import { SesEmailSender } from '../../functions/providers/email/ses.js';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const dirs: string[] = [];
const tempOutbox = () => {
  const dir = mkdtempSync(join(tmpdir(), 'outbox-'));
  dirs.push(dir);
  return join(dir, 'outbox', 'email.jsonl');
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('local outbox email adapter', () => {
  it('lives at <LOCAL_STATE_DIR>/outbox/email.jsonl', () => {
    expect(emailOutboxPath({ LOCAL_STATE_DIR: '/var/state' })).toBe('/var/state/outbox/email.jsonl');
  });

  it('appends one JSON line per email, readable back in order', async () => {
    const path = tempOutbox();
    const sender = new LocalOutboxEmailSender(path);
    const first = await sender.send({
      to: 'a@example.com',
      subject: 'One',
      text: 'first',
      idempotencyKey: 'k1',
    });
    await sender.send({
      to: 'b@example.com',
      subject: 'Two',
      text: 'second',
      html: '<p>second</p>',
      idempotencyKey: 'k2',
    });
    expect(first.duplicate).toBe(false);
    expect(readEmailOutbox(path)).toEqual([
      expect.objectContaining({
        message_id: first.messageId,
        to: 'a@example.com',
        subject: 'One',
        text: 'first',
        idempotency_key: 'k1',
      }),
      expect.objectContaining({ to: 'b@example.com', html: '<p>second</p>', idempotency_key: 'k2' }),
    ]);
  });

  it('the same idempotency key sends once', async () => {
    const path = tempOutbox();
    const sender = new LocalOutboxEmailSender(path);
    const first = await sender.send({ to: 'a@example.com', subject: 'S', text: 't', idempotencyKey: 'same' });
    const again = await sender.send({ to: 'a@example.com', subject: 'S', text: 't', idempotencyKey: 'same' });
    expect(again).toEqual({ messageId: first.messageId, duplicate: true });
    expect(readEmailOutbox(path)).toHaveLength(1);
  });

  it('addresses at fail.test fail like a provider outage, and nothing is written', async () => {
    const path = tempOutbox();
    const sender = new LocalOutboxEmailSender(path);
    await expect(
      sender.send({ to: 'x@FAIL.test', subject: 'S', text: 't', idempotencyKey: 'f' }),
    ).rejects.toBeInstanceOf(EmailSendError);
    expect(readEmailOutbox(path)).toEqual([]);
  });
});

describe('SES v2 adapter (signed requests against a stand-in HTTP endpoint, as the official client sends them)', () => {
  async function endpoint(status: number, answer: unknown) {
    const requests: {
      method: string;
      url: string;
      headers: Record<string, string | string[] | undefined>;
      body: string;
    }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    const credentials = { accessKeyId: 'AKID', secretAccessKey: 'SECRET', sessionToken: 'SESSION' };
    const options = {
      region: 'ap-southeast-2',
      from: 'no-reply@example.com',
      endpoint: `http://127.0.0.1:${port}`,
      credentials,
    };
    /** The official client, to compare the requests with. */
    const client = new SESv2Client({
      region: 'ap-southeast-2',
      endpoint: options.endpoint,
      credentials,
      maxAttempts: 1,
    });
    return {
      requests,
      options,
      client,
      close: () => new Promise<void>((done) => server.close(() => done())),
    };
  }

  it('sends a signed SendEmail request and returns the message id', async () => {
    const { requests, options, client, close } = await endpoint(200, { MessageId: 'ses-123' });
    try {
      const sender = new SesEmailSender(options);
      const receipt = await sender.send({
        to: 'a@example.com',
        subject: 'Hi',
        text: 'Body',
        html: '<b>Body</b>',
        idempotencyKey: 'invitation:inv_1:2',
      });
      expect(receipt).toEqual({ messageId: 'ses-123', duplicate: false });
      expect(requests).toHaveLength(1);
      expect(requests[0].url).toBe('/v2/email/outbound-emails');
      expect(String(requests[0].headers.authorization)).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKID\/\d{8}\/ap-southeast-2\/ses\/aws4_request, /,
      );
      expect(requests[0].headers['x-amz-security-token']).toBe('SESSION');
      expect(JSON.parse(requests[0].body)).toEqual({
        FromEmailAddress: 'no-reply@example.com',
        Destination: { ToAddresses: ['a@example.com'] },
        Content: {
          Simple: {
            Subject: { Data: 'Hi', Charset: 'UTF-8' },
            Body: {
              Text: { Data: 'Body', Charset: 'UTF-8' },
              Html: { Data: '<b>Body</b>', Charset: 'UTF-8' },
            },
          },
        },
        EmailTags: [{ Name: 'idempotency_key', Value: 'invitation-inv_1-2' }],
      });
      expect(requests[0].headers['content-type']).toBe('application/json');

      // The official client sends the same request: method, path, body and signing scope.
      await client.send(new SendEmailCommand(JSON.parse(requests[0].body) as never));
      expect(requests[1].url).toBe(requests[0].url);
      expect(requests[1].method).toBe(requests[0].method);
      expect(JSON.parse(requests[1].body)).toEqual(JSON.parse(requests[0].body));
      const scope = (request: (typeof requests)[number]) =>
        String(request.headers.authorization)
          .replace(/\/\d{8}\//, '/DATE/')
          .split(', ')[0];
      expect(scope(requests[0])).toBe(scope(requests[1]));
    } finally {
      await close();
    }
  });

  it('a refusal is an EmailSendError', async () => {
    const { options, close } = await endpoint(400, { message: 'Email address is not verified.' });
    try {
      const sender = new SesEmailSender(options);
      await expect(
        sender.send({ to: 'a@example.com', subject: 'S', text: 't', idempotencyKey: 'k' }),
      ).rejects.toBeInstanceOf(EmailSendError);
    } finally {
      await close();
    }
  });
});
