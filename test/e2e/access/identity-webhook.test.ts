import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { api } from '../../helpers/http.js';
import { subjectFor, tokenFor } from '../../helpers/tokens.js';
import { uniqueEmail } from './fixtures.js';
import { UserEntity, UserIdentityEntity } from '../../../functions/platform/auth/entities.js';

/**
 * `POST /webhooks/identity` through the gateway's function URL: Standard Webhooks signatures with the
 * stack's IDENTITY_WEBHOOK_SECRET (from stack.json's env); the profile is read back from the table.
 */
const secret = () => {
  const value = process.env.IDENTITY_WEBHOOK_SECRET;
  if (!value) throw new Error('the local stack did not put IDENTITY_WEBHOOK_SECRET in stack.json');
  return value;
};

function postConfirmation(email: string, name?: string) {
  return {
    version: '1',
    triggerSource: 'PostConfirmation_ConfirmSignUp',
    region: 'ap-southeast-2',
    userPoolId: 'ap-southeast-2_local',
    userName: subjectFor(email),
    request: {
      userAttributes: { sub: subjectFor(email), email, email_verified: 'true', ...(name ? { name } : {}) },
    },
    response: {},
  };
}

function signed(payload: unknown, options: { id?: string; at?: Date; key?: string } = {}) {
  const body = JSON.stringify(payload);
  const id = options.id ?? `evt_${randomUUID()}`;
  const at = options.at ?? new Date();
  const signature = new Webhook(options.key ?? secret()).sign(id, at, body);
  return {
    id,
    rawBody: body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    },
  };
}

const send = (request: { rawBody: string; headers: Record<string, string> }) =>
  api('POST', '/webhooks/identity', { rawBody: request.rawBody, headers: request.headers });

async function profileOf(email: string) {
  const identity = (await UserIdentityEntity.get({ subject: subjectFor(email) }).go({ consistent: true }))
    .data;
  if (!identity) return undefined;
  return (await UserEntity.get({ userId: identity.userId }).go({ consistent: true })).data ?? undefined;
}

describe('identity webhook', () => {
  it('post-confirmation creates the profile; the user’s first token finds the same user', async () => {
    const email = uniqueEmail('signup');
    const response = await send(signed(postConfirmation(email, 'Fox Mulder')));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ received: true, outcome: 'created' });
    const profile = await profileOf(email);
    expect(profile).toMatchObject({ email, name: 'Fox Mulder', userId: expect.stringMatching(/^usr_/) });

    const token = await tokenFor(email);
    const me = await api('GET', '/api/v1/me', { token });
    expect(me.body).toMatchObject({ user_id: profile!.userId, email, name: 'Fox Mulder' });
  });

  it('the same event twice changes nothing the second time', async () => {
    const email = uniqueEmail('twice');
    const request = signed(postConfirmation(email, 'First'));
    expect((await send(request)).body.outcome).toBe('created');
    const first = await profileOf(email);
    const again = await send(request);
    expect(again.status).toBe(200);
    expect(again.body.outcome).toBe('duplicate');
    expect(await profileOf(email)).toEqual(first);
  });

  it('a later event updates the profile (name, email); a repeat of it changes nothing', async () => {
    const email = uniqueEmail('update');
    await send(signed(postConfirmation(email, 'Old Name')));
    const created = await profileOf(email);
    const newEmail = uniqueEmail('renamed');
    const base = postConfirmation(email, 'New Name');
    const changed = {
      ...base,
      triggerSource: 'PostAuthentication_Authentication',
      request: { userAttributes: { ...base.request.userAttributes, email: newEmail } },
    };
    const update = signed(changed);
    expect((await send(update)).body.outcome).toBe('updated');
    const updated = await profileOf(email);
    expect(updated).toMatchObject({
      userId: created!.userId,
      email: newEmail,
      name: 'New Name',
      updatedAt: expect.any(String),
    });
    expect((await send(update)).body.outcome).toBe('duplicate');
    expect(await profileOf(email)).toEqual(updated);
    // A new event with nothing new is applied and changes nothing.
    expect((await send(signed(changed))).body.outcome).toBe('unchanged');
    expect(await profileOf(email)).toEqual(updated);
  });

  it.each([
    [
      'a wrong signature',
      (r: ReturnType<typeof signed>) => ({ ...r, headers: { ...r.headers, 'webhook-signature': 'v1,AAAA' } }),
    ],
    [
      'a signature by another secret',
      () =>
        signed(postConfirmation('x@example.com'), {
          key: `whsec_${Buffer.from('another-secret-entirely').toString('base64')}`,
        }),
    ],
    [
      'a tampered body',
      (r: ReturnType<typeof signed>) => ({
        ...r,
        rawBody: r.rawBody.replace('"version":"1"', '"version":"2"'),
      }),
    ],
    [
      'a stale timestamp (6 minutes old)',
      () => signed(postConfirmation('x@example.com'), { at: new Date(Date.now() - 6 * 60_000) }),
    ],
    [
      'a future timestamp (6 minutes ahead)',
      () => signed(postConfirmation('x@example.com'), { at: new Date(Date.now() + 6 * 60_000) }),
    ],
    [
      'no signature headers',
      (r: ReturnType<typeof signed>) => ({ ...r, headers: { 'content-type': 'application/json' } }),
    ],
  ])('%s is 401 and changes nothing', async (_label, tamper) => {
    const email = uniqueEmail('forged');
    const base = signed(postConfirmation(email, 'Forged'));
    const request = tamper(base);
    const response = await send(request);
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: 'Unauthorized' });
    expect(await profileOf(email)).toBeUndefined();
    expect(await profileOf('x@example.com')).toBeUndefined();
  });

  it('a signed event that is not JSON or lacks the user’s attributes is 422 and changes nothing', async () => {
    const notJson = signed('placeholder');
    notJson.rawBody = 'not json';
    notJson.headers['webhook-signature'] = new Webhook(secret()).sign(
      notJson.id,
      new Date(Number(notJson.headers['webhook-timestamp']) * 1000),
      'not json',
    );
    expect((await send(notJson)).status).toBe(422);
    const email = uniqueEmail('incomplete');
    const incomplete = signed({ userName: 'u', request: { userAttributes: { email } } });
    const response = await send(incomplete);
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({
      type: 'missing',
      loc: ['body', 'request', 'userAttributes', 'sub'],
    });
  });
});
