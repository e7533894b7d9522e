import { describe, expect, it } from '@jest/globals';
import { paginate } from '../../functions/platform/pagination.js';
import { UpdateWorkspaceBody, InvitationBody } from '../../functions/access/schemas.js';
import { isTimeZone } from '../../functions/platform/time-zones.js';
import { planAllowsApiKeys } from '../../functions/developer/api-keys.js';
import { PLANS, type Plan } from '../../functions/billing/plans.js';
import { ValidationError } from '../../functions/platform/errors.js';

describe('pagination of access lists', () => {
  const items = ['usr_C', 'usr_A', 'inv_B', 'usr_D', 'usr_E'].map((id) => ({ id }));

  it('walks every item once, in key order, then ends with a null cursor', () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = paginate(items, (i) => i.id, { limit: 2, cursor });
      seen.push(...page.items.map((i) => i.id));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(['inv_B', 'usr_A', 'usr_C', 'usr_D', 'usr_E']);
  });

  it('an exact last page has no next cursor', () => {
    expect(paginate(items, (i) => i.id, { limit: 5 }).nextCursor).toBeNull();
  });

  it.each(['', '@@@', 'not base64!'])('a forged cursor %p is a 422 on query.cursor', (cursor) => {
    let thrown: unknown;
    try {
      paginate(items, (i) => i.id, { limit: 2, cursor });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    expect((thrown as ValidationError).detail[0]).toMatchObject({
      type: 'value_error',
      loc: ['query', 'cursor'],
    });
  });
});

describe('API keys are gated by plan', () => {
  it('follows the plan feature flag', () => {
    for (const plan of Object.values(PLANS)) expect(planAllowsApiKeys(plan)).toBe(plan.features.apiKeys);
    const without: Plan = { ...PLANS.free, features: { ...PLANS.free.features, apiKeys: false } };
    expect(planAllowsApiKeys(without)).toBe(false);
  });
});

describe('access request rules', () => {
  it.each([
    ['UTC', true],
    ['Australia/Sydney', true],
    ['America/Argentina/Buenos_Aires', true],
    ['Mars/Olympus', false],
    ['+10:00', false],
    ['', false],
    ['../../etc/passwd', false],
  ])('time zone %p valid: %p', (zone, valid) => {
    expect(isTimeZone(zone)).toBe(valid);
  });

  it('hot-reply recipients are normalised: emails lower-cased, phones to E.164', () => {
    expect(
      UpdateWorkspaceBody.parse({ hot_reply_alert_recipients: ['Boss@Example.COM', '+61 (491) 570-156'] }),
    ).toEqual({
      hot_reply_alert_recipients: ['boss@example.com', '+61491570156'],
    });
    expect(UpdateWorkspaceBody.safeParse({ hot_reply_alert_recipients: ['0491 570 156'] }).success).toBe(
      false,
    );
  });

  it('an invitation names each workspace once and never an owner role', () => {
    const ws = 'ws_01J0000000000000000000000A';
    expect(
      InvitationBody.safeParse({
        email: 'a@example.com',
        role: 'regular',
        workspaces: [
          { workspace_id: ws, role: 'admin' },
          { workspace_id: ws, role: 'viewer' },
        ],
      }).success,
    ).toBe(false);
    expect(InvitationBody.safeParse({ email: 'a@example.com', role: 'owner' }).success).toBe(false);
    expect(InvitationBody.parse({ email: ' A@Example.com ', role: 'admin' })).toEqual({
      email: 'a@example.com',
      role: 'admin',
    });
  });
});
