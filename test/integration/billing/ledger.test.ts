import { describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { getBillingAccount, recordMovement } from '../../../functions/billing/ledger.js';
import { chargeCallUsage, chargeEvaluationRun, chargeSms } from '../../../functions/billing/metering.js';
import { callUnits, memoriesUnits, smsUnits, evaluationUnits } from '../../../functions/billing/rules.js';
import { smsSegmentation } from '../../../functions/billing/sms-segments.js';
import { HttpError } from '../../../functions/platform/errors.js';
import { ledgerEntries, newOrganisation, topUp } from './fixtures.js';

/** The ledger against DynamoDB Local: every charge once, no lost update, prepaid charges never overdraw. */
const balance = async (organisationId: string) =>
  (await getBillingAccount(organisationId, { consistent: true }))!.balanceUnits;

describe('concurrent charges', () => {
  test('50 concurrent charges of every kind leave exactly the right balance and usage', async () => {
    const { organisationId } = await newOrganisation('concurrent');
    await topUp(organisationId, 100_000);
    const start = await balance(organisationId);
    const texts = ['Short reply', 'a'.repeat(161), 'Привет, это ваш агент', '€'.repeat(81)];
    let expected = 0;
    let seconds = 0;
    let memorySeconds = 0;
    let segments = 0;
    let runs = 0;
    const charges: Promise<unknown>[] = [];
    for (let i = 0; i < 50; i += 1) {
      if (i % 5 === 4) {
        runs += 1;
        expected += evaluationUnits();
        charges.push(chargeEvaluationRun({ organisationId, evaluationId: `eval-${randomUUID()}` }));
      } else if (i % 5 === 3) {
        const text = texts[i % texts.length];
        segments += smsSegmentation(text).segments;
        expected += smsUnits(smsSegmentation(text).segments);
        charges.push(chargeSms({ organisationId, smsId: `sms-${randomUUID()}`, text }));
      } else {
        const billable = i + 1;
        const memoriesUsed = i % 2 === 0;
        seconds += billable;
        if (memoriesUsed) memorySeconds += billable;
        expected += callUnits(billable) + (memoriesUsed ? memoriesUnits(billable) : 0);
        charges.push(
          chargeCallUsage({
            organisationId,
            callId: `call_${randomUUID()}`,
            billableSeconds: billable,
            memoriesUsed,
          }),
        );
      }
    }
    await Promise.all(charges);
    const account = await getBillingAccount(organisationId, { consistent: true });
    expect(account!.balanceUnits).toBe(start - expected);
    expect(account!.spentUnits).toBe(expected);
    expect(account!.callSeconds).toBe(seconds);
    expect(account!.memoriesSeconds).toBe(memorySeconds);
    expect(account!.smsSegments).toBe(segments);
    expect(account!.evaluationRuns).toBe(runs);
    const entries = await ledgerEntries(organisationId);
    const charged = entries.filter((e) => e.kind === 'charge');
    expect(charged.reduce((sum, e) => sum - e.amountUnits, 0)).toBe(expected);
    // 30 calls (15 with memories, each a separate entry), 10 SMS, 10 evaluations.
    expect(charged).toHaveLength(30 + 15 + 10 + 10);
  });
});

describe('each charge applies once', () => {
  test('the same call, SMS and evaluation sent twice are charged once', async () => {
    const { organisationId } = await newOrganisation('twice');
    const start = await balance(organisationId);
    const callId = `call_${randomUUID()}`;
    const first = await chargeCallUsage({ organisationId, callId, billableSeconds: 61, memoriesUsed: true });
    const again = await chargeCallUsage({ organisationId, callId, billableSeconds: 61, memoriesUsed: true });
    expect(first).toMatchObject({ call: { applied: true }, memories: { applied: true }, units: 1220 + 305 });
    expect(again).toMatchObject({
      call: { applied: false, duplicate: true },
      memories: { applied: false, duplicate: true },
    });

    const smsId = `sms-${randomUUID()}`;
    expect(await chargeSms({ organisationId, smsId, text: 'Hello' })).toMatchObject({
      applied: true,
      segments: 1,
      credits: 5,
    });
    expect(await chargeSms({ organisationId, smsId, text: 'Hello' })).toMatchObject({
      applied: false,
      duplicate: true,
    });

    const evaluationId = `eval-${randomUUID()}`;
    expect(await chargeEvaluationRun({ organisationId, evaluationId })).toMatchObject({
      applied: true,
      units: 1200,
    });
    expect(await chargeEvaluationRun({ organisationId, evaluationId })).toMatchObject({
      applied: false,
      duplicate: true,
    });

    expect(await balance(organisationId)).toBe(start - 1220 - 305 - 300 - 1200);
    expect((await ledgerEntries(organisationId)).filter((e) => e.kind === 'charge')).toHaveLength(4);
  });

  test('the same SMS sent ten times at once is charged once', async () => {
    const { organisationId } = await newOrganisation('at-once');
    const start = await balance(organisationId);
    const smsId = `sms-${randomUUID()}`;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => chargeSms({ organisationId, smsId, text: 'a'.repeat(200) })),
    );
    expect(results.filter((r) => r.applied)).toHaveLength(1);
    expect(results.filter((r) => r.duplicate)).toHaveLength(9);
    expect(await balance(organisationId)).toBe(start - smsUnits(2));
  });

  test('memories are charged only when used', async () => {
    const { organisationId } = await newOrganisation('memories');
    const start = await balance(organisationId);
    await chargeCallUsage({
      organisationId,
      callId: `call_${randomUUID()}`,
      billableSeconds: 60,
      memoriesUsed: false,
    });
    expect(await balance(organisationId)).toBe(start - 1200);
    await chargeCallUsage({
      organisationId,
      callId: `call_${randomUUID()}`,
      billableSeconds: 60,
      memoriesUsed: true,
    });
    expect(await balance(organisationId)).toBe(start - 1200 - 1500);
    const account = await getBillingAccount(organisationId, { consistent: true });
    expect({ call: account!.callSeconds, memories: account!.memoriesSeconds }).toEqual({
      call: 120,
      memories: 60,
    });
  });
});

describe('prepaid charges never overdraw', () => {
  test('an SMS the balance cannot cover is 402 and changes nothing', async () => {
    const { organisationId } = await newOrganisation('prepaid');
    // Spend all but the price of one 1-segment SMS (5 credits).
    await chargeCallUsage({
      organisationId,
      callId: `call_${randomUUID()}`,
      billableSeconds: (30_000 - 300) / 20,
    });
    expect(await balance(organisationId)).toBe(300);
    await chargeSms({ organisationId, smsId: `sms-${randomUUID()}`, text: 'the last one' });
    expect(await balance(organisationId)).toBe(0);
    const before = (await ledgerEntries(organisationId)).length;
    await expect(
      chargeSms({ organisationId, smsId: `sms-${randomUUID()}`, text: 'one too many' }),
    ).rejects.toMatchObject({
      status: 402,
      message: 'Insufficient credits',
    });
    await expect(
      chargeEvaluationRun({ organisationId, evaluationId: `eval-${randomUUID()}` }),
    ).rejects.toBeInstanceOf(HttpError);
    expect(await balance(organisationId)).toBe(0);
    expect(await ledgerEntries(organisationId)).toHaveLength(before);
  });

  test('ten SMS at once against the price of three: three are charged, the balance ends at zero', async () => {
    const { organisationId } = await newOrganisation('race');
    await chargeCallUsage({
      organisationId,
      callId: `call_${randomUUID()}`,
      billableSeconds: (30_000 - 900) / 20,
    });
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        chargeSms({ organisationId, smsId: `sms-${randomUUID()}`, text: 'Hi' }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused).toHaveLength(7);
    for (const r of refused) expect(r.reason).toMatchObject({ status: 402 });
    expect(await balance(organisationId)).toBe(0);
  });
});

describe('refunds', () => {
  test('a refund of a charge gives the credits back and takes them out of the period’s usage, once', async () => {
    const { organisationId } = await newOrganisation('refund');
    const start = await balance(organisationId);
    const smsId = `sms-${randomUUID()}`;
    const charge = await chargeSms({ organisationId, smsId, text: 'a'.repeat(161) });
    const refund = {
      organisationId,
      kind: 'refund' as const,
      amountUnits: charge.units,
      reason: `SMS ${smsId} not sent`,
      sourceKey: `sms:${smsId}:refund`,
      usage: { kind: 'sms' as const, quantity: -charge.segments },
    };
    expect(await recordMovement(refund)).toMatchObject({ applied: true });
    expect(await recordMovement(refund)).toMatchObject({ applied: false, duplicate: true });
    const account = await getBillingAccount(organisationId, { consistent: true });
    expect(account!.balanceUnits).toBe(start);
    expect({ spent: account!.spentUnits, sms: account!.smsUnits, segments: account!.smsSegments }).toEqual({
      spent: 0,
      sms: 0,
      segments: 0,
    });
  });
});
