import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emailOutboxPath, LocalOutboxEmailSender, readEmailOutbox } from '../../functions/providers/email/local-outbox.js';
import { EmailSendError } from '../../functions/providers/email/port.js';
import { SesEmailSender } from '../../functions/providers/email/ses.js';
import { signRequest } from '../../functions/providers/email/sigv4.js';

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
    const first = await sender.send({ to: 'a@example.com', subject: 'One', text: 'first', idempotencyKey: 'k1' });
    await sender.send({ to: 'b@example.com', subject: 'Two', text: 'second', html: '<p>second</p>', idempotencyKey: 'k2' });
    expect(first.duplicate).toBe(false);
    expect(readEmailOutbox(path)).toEqual([
      expect.objectContaining({ message_id: first.messageId, to: 'a@example.com', subject: 'One', text: 'first', idempotency_key: 'k1' }),
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
    await expect(sender.send({ to: 'x@FAIL.test', subject: 'S', text: 't', idempotencyKey: 'f' })).rejects.toBeInstanceOf(EmailSendError);
    expect(readEmailOutbox(path)).toEqual([]);
  });
});

describe('SigV4 (for the SES adapter, node:crypto only)', () => {
  const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
  const at = new Date('2015-08-30T12:36:00Z');

  it('matches the AWS Signature Version 4 test suite (get-vanilla)', () => {
    const headers = signRequest(
      { method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: {}, body: '' },
      { credentials, region: 'us-east-1', service: 'service', at },
    );
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, ' +
        'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
    expect(headers['x-amz-date']).toBe('20150830T123600Z');
  });

  it('signs a JSON POST with a session token as the AWS SDK signer does', () => {
    // Expected value computed with @smithy/signature-v4 (the SDK's signer) for the same request.
    const headers = signRequest(
      {
        method: 'POST',
        url: new URL('https://email.ap-southeast-2.amazonaws.com/v2/email/outbound-emails'),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ a: 1, b: 'x y' }),
      },
      { credentials: { ...credentials, sessionToken: 'TOKEN' }, region: 'ap-southeast-2', service: 'ses', at },
    );
    expect(headers['x-amz-security-token']).toBe('TOKEN');
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/ap-southeast-2/ses/aws4_request, ' +
        'SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, ' +
        'Signature=4a74587c36ef3752baedf9a61c3c435c96e706cee601c718d762f7d2bf84733a',
    );
  });
});

describe('SES v2 adapter (against a stand-in HTTP endpoint)', () => {
  function endpoint(status: number, answer: unknown) {
    const requests: { url: string; init: RequestInit }[] = [];
    const fetchImpl = (async (url: Parameters<typeof fetch>[0], init?: RequestInit) => {
      requests.push({ url: String(url), init: init ?? {} });
      return new Response(JSON.stringify(answer), { status, headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;
    return { requests, fetchImpl };
  }
  const credentials = () => ({ accessKeyId: 'AKID', secretAccessKey: 'SECRET', sessionToken: 'SESSION' });

  it('posts a signed SendEmail request and returns the message id', async () => {
    const { requests, fetchImpl } = endpoint(200, { MessageId: 'ses-123' });
    const sender = new SesEmailSender({ region: 'ap-southeast-2', from: 'no-reply@example.com', credentials, fetchImpl });
    const receipt = await sender.send({ to: 'a@example.com', subject: 'Hi', text: 'Body', html: '<b>Body</b>', idempotencyKey: 'invitation:inv_1:2' });
    expect(receipt).toEqual({ messageId: 'ses-123', duplicate: false });
    expect(requests).toHaveLength(1);
    expect(requests[0].url).toBe('https://email.ap-southeast-2.amazonaws.com/v2/email/outbound-emails');
    const headers = requests[0].init.headers as Record<string, string>;
    expect(headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKID\/\d{8}\/ap-southeast-2\/ses\/aws4_request, /);
    expect(headers['x-amz-security-token']).toBe('SESSION');
    expect(JSON.parse(String(requests[0].init.body))).toEqual({
      FromEmailAddress: 'no-reply@example.com',
      Destination: { ToAddresses: ['a@example.com'] },
      Content: {
        Simple: {
          Subject: { Data: 'Hi', Charset: 'UTF-8' },
          Body: { Text: { Data: 'Body', Charset: 'UTF-8' }, Html: { Data: '<b>Body</b>', Charset: 'UTF-8' } },
        },
      },
      EmailTags: [{ Name: 'idempotency_key', Value: 'invitation-inv_1-2' }],
    });
  });

  it('a refusal is an EmailSendError', async () => {
    const { fetchImpl } = endpoint(400, { message: 'Email address is not verified.' });
    const sender = new SesEmailSender({ region: 'ap-southeast-2', from: 'no-reply@example.com', credentials, fetchImpl });
    await expect(sender.send({ to: 'a@example.com', subject: 'S', text: 't', idempotencyKey: 'k' })).rejects.toThrow(/SES refused the message: 400/);
  });
});
