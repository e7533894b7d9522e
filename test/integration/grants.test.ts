import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { apiRoutes } from '../../functions/api-routes.js';
import { assertGranted, runWithGrants } from '../../functions/platform/grants.js';
import { INTERNAL_ERROR_MESSAGE } from '../../functions/platform/errors.js';
import type { Access } from '../../functions/platform/http/route.js';
import { newId } from '../../functions/platform/ids.js';
import { logger } from '../../functions/platform/logger.js';
import { queueUrl, sendMessage, sqsClient } from '../../functions/platform/queue.js';
import { dlqName } from '../../functions/platform/resources.js';
import { putObject, signedDownloadUrl } from '../../functions/platform/storage.js';
import { docClient, tableName } from '../../functions/platform/table.js';
import { LocalOutboxEmailSender, readEmailOutbox } from '../../functions/providers/email/local-outbox.js';
import { catalog } from '../../lib/cloud/catalog.js';
import type { FunctionSpec } from '../../lib/cloud/catalog-types.js';
import { httpApiEvent } from '../../lib/local/events.js';
import { invokeFunction } from '../../lib/local/invoke.js';
import { Router } from '../../lib/local/router.js';
import { tokenFor } from '../helpers/tokens.js';

/**
 * The local stack refuses what a function has not declared, as IAM would in the cloud: each
 * invocation runs with its catalog entry's access (lib/local/invoke.ts), and the SDK clients of
 * functions/platform check every call against it (functions/platform/grants.ts). These tests use the
 * running local stack's table, queues and bucket; a refused call never reaches them.
 */

const denied = (action: string) =>
  expect.objectContaining({
    name: 'AccessDeniedException',
    message: expect.stringContaining(`is not authorized to perform: ${action} on resource: `),
  });

/** Runs `work` as function `fnId` with `access`, as the local stack runs a handler. */
const asFunction = <T>(fnId: string, access: Access, work: () => Promise<T>) =>
  runWithGrants(fnId, access, work);

describe('table grants', () => {
  const key = () => ({ pk: `GRANTS#${newId('user')}`, sk: 'GRANTS' });

  it("a function with table: 'read' is refused PutItem (nothing is written) and allowed GetItem", async () => {
    const item = key();
    const put = asFunction('ReadOnlyFn', { table: 'read' }, () =>
      docClient().send(new PutCommand({ TableName: tableName(), Item: { ...item, value: 1 } })),
    );
    await expect(put).rejects.toEqual(denied('dynamodb:PutItem'));
    await expect(put).rejects.toMatchObject({
      message: expect.stringMatching(
        /^User: arn:aws:sts::000000000000:assumed-role\/ReadOnlyFnRole\/ReadOnlyFn is not authorized to perform: dynamodb:PutItem on resource: arn:aws:dynamodb:[a-z0-9-]+:000000000000:table\/.+ because no identity-based policy allows the dynamodb:PutItem action$/,
      ),
    });

    const read = await asFunction('ReadOnlyFn', { table: 'read' }, () =>
      docClient().send(new GetCommand({ TableName: tableName(), Key: item })),
    );
    expect(read.Item).toBeUndefined(); // the refused put never reached the table
  });

  it('a transaction is authorised item by item; readwrite allows it; no context (the cloud) checks nothing', async () => {
    const item = key();
    const transaction = () =>
      docClient().send(
        new TransactWriteCommand({
          TransactItems: [{ Put: { TableName: tableName(), Item: { ...item, value: 1 } } }],
        }),
      );
    await expect(asFunction('ReadOnlyFn', { table: 'read' }, transaction)).rejects.toEqual(
      denied('dynamodb:PutItem'),
    );
    await expect(
      asFunction('NoTableFn', {}, () =>
        docClient().send(new GetCommand({ TableName: tableName(), Key: item })),
      ),
    ).rejects.toEqual(denied('dynamodb:GetItem'));
    await asFunction('ReadWriteFn', { table: 'readwrite' }, transaction);
    const { Item } = await docClient().send(new GetCommand({ TableName: tableName(), Key: item }));
    expect(Item).toMatchObject({ value: 1 });
  });
});

describe('queue grants', () => {
  it('a function may send only to the queues it declares', async () => {
    const access: Access = { table: 'readwrite', sendsTo: ['postCall'] };
    await expect(
      asFunction('SendsToPostCall', access, () =>
        sendMessage('calls', { type: 'call.dispatch', call_id: 'x', workspace_id: 'y' }),
      ),
    ).rejects.toEqual(denied('sqs:SendMessage'));
    // grantSendMessages also allows GetQueueAttributes: through the same client, without a message.
    const sqs = await sqsClient();
    const attributes = await asFunction('SendsToPostCall', access, () =>
      sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: queueUrl('postCall'), AttributeNames: ['QueueArn'] }),
      ),
    );
    expect(attributes.Attributes?.QueueArn).toContain('post-call');
    await expect(
      asFunction('SendsToPostCall', access, () =>
        sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: queueUrl('calls'), AttributeNames: ['QueueArn'] }),
        ),
      ),
    ).rejects.toEqual(denied('sqs:GetQueueAttributes'));
    runWithGrants('SendsToPostCall', access, () => {
      expect(() => assertGranted('sqs', 'SendMessage', { QueueUrl: queueUrl('postCall') })).not.toThrow();
      // A queue's DLQ is another queue: not granted by sending to the queue.
      const dlq = queueUrl('postCall').replace(/post-call$/, dlqName('postCall'));
      expect(() => assertGranted('sqs', 'SendMessage', { QueueUrl: dlq })).toThrow(/sqs:SendMessage/);
    });
  });
});

describe('bucket, secret and email grants', () => {
  it("a presigned download URL needs the bucket's read grant, a put its readwrite grant", async () => {
    const key = `recordings/grants/${newId('call')}.wav`;
    await expect(asFunction('NoBucketFn', { table: 'read' }, () => signedDownloadUrl(key))).rejects.toEqual(
      denied('s3:GetObject'),
    );
    await expect(
      asFunction('ReadBucketFn', { bucket: 'read' }, () => signedDownloadUrl(key)),
    ).resolves.toContain(key);
    await expect(
      asFunction('ReadBucketFn', { bucket: 'read' }, () => putObject(key, 'x', 'text/plain')),
    ).rejects.toEqual(denied('s3:PutObject'));
  });

  it('a secret is readable only when declared', () => {
    const arn = 'arn:aws:secretsmanager:ap-southeast-2:000000000000:secret:voice-agent/telephony-AbC123';
    runWithGrants('TelephonyFn', { secrets: ['telephony'] }, () =>
      expect(() => assertGranted('secretsmanager', 'GetSecretValue', { SecretId: arn })).not.toThrow(),
    );
    runWithGrants('PaymentsFn', { secrets: ['payments'] }, () =>
      expect(() => assertGranted('secretsmanager', 'GetSecretValue', { SecretId: arn })).toThrow(
        /secretsmanager:GetSecretValue on resource: arn:aws:secretsmanager:.*voice-agent\/telephony/,
      ),
    );
  });

  it('email (SES, locally its outbox) only with email: true', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grants-outbox-'));
    try {
      const sender = new LocalOutboxEmailSender(join(dir, 'email.jsonl'));
      const message = { to: 'a@example.com', subject: 'S', text: 't', idempotencyKey: newId('user') };
      await expect(
        asFunction('NoEmailFn', { table: 'readwrite' }, () => sender.send(message)),
      ).rejects.toEqual(denied('ses:SendEmail'));
      expect(readEmailOutbox(join(dir, 'email.jsonl'))).toEqual([]);
      await asFunction('EmailFn', { email: true }, () => sender.send(message));
      expect(readEmailOutbox(join(dir, 'email.jsonl'))).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('through the HTTP kernel', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  /** Invokes `fn` for `GET path` as the local gateway does (same event, same invokeFunction). */
  async function get(fn: FunctionSpec, path: string, token: string) {
    const match = new Router([fn]).match('GET', path);
    if (match.kind !== 'match') throw new Error(`${fn.id} has no route for GET ${path}`);
    const event = httpApiEvent(
      {
        method: 'GET',
        url: path,
        headers: { authorization: `Bearer ${token}` },
        body: Buffer.alloc(0),
        sourceIp: '127.0.0.1',
      },
      match.target,
      match.pathParameters,
    );
    return (await invokeFunction(fn, event, process.env.AWS_REGION ?? 'ap-southeast-2')) as {
      statusCode: number;
      body: string;
    };
  }

  it('a route that writes without a write grant answers 500 with the spec message and logs the missing grant', async () => {
    const real = catalog.find((fn) => fn.id === 'WebhookDeliveriesApi')!;
    // The bug this catches: listWebhookDeliveries declared table: 'read', yet a new user's first
    // authenticated request writes their profile. As its own function it would be refused in AWS.
    const readOnly: FunctionSpec = { ...real, access: { table: 'read' } };
    const token = await tokenFor(`grants-${newId('user').toLowerCase()}@example.com`);
    const path = `/api/v1/workspaces/${newId('workspace')}/webhook-deliveries`;
    const errors = jest.spyOn(logger, 'error').mockImplementation(() => undefined);

    const refused = await get(readOnly, path, token);
    expect(refused.statusCode).toBe(500);
    expect(JSON.parse(refused.body)).toEqual({ error: INTERNAL_ERROR_MESSAGE });
    expect(errors).toHaveBeenCalledWith(
      expect.stringMatching(
        /^access denied: WebhookDeliveriesApi is not granted dynamodb:PutItem on .*: declare \{ table: 'readwrite' \} in the route's access/,
      ),
      expect.anything(),
    );

    // With its declared grants the same request gets past authentication (not a member: 403/404).
    const allowed = await get(real, path, token);
    expect(allowed.statusCode).not.toBe(500);
    expect([403, 404]).toContain(allowed.statusCode);
  });
});

describe('declarations', () => {
  it("every authenticated route declares table: 'readwrite'", () => {
    // Authentication itself writes: a new user's first request creates their profile
    // (functions/platform/auth/users.ts) and an API key's use records last_used_at
    // (functions/platform/auth/authenticate-bearer.ts). A route that only reads still needs the
    // write grant, or it fails in AWS when it is the first a user calls (or its domain's only route).
    const readOnly = Object.entries(apiRoutes).flatMap(([domain, routes]) =>
      Object.entries(routes)
        .filter(([, route]) => route.auth !== 'none' && route.access.table !== 'readwrite')
        .map(
          ([name, route]) =>
            `${domain}.${name} (${route.method} ${route.path}): ${JSON.stringify(route.access)}`,
        ),
    );
    expect(readOnly).toEqual([]);
  });
});
