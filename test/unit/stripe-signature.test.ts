import { describe, expect, test } from '@jest/globals';
import Stripe from 'stripe';
import { verifyStripeWebhook } from '../../functions/providers/payments/stripe-events.js';

/**
 * verifyStripeWebhook checks `Stripe-Signature` itself (the library is not loaded where only webhooks
 * are checked): it accepts and refuses exactly the headers the official library's constructEvent does.
 */
const SECRET = 'whsec_signature_test_0123456789';
const payload = JSON.stringify({
  id: 'evt_1',
  object: 'event',
  type: 'ping',
  created: 1,
  data: { object: {} },
});
const now = () => Math.floor(Date.now() / 1000);
const v1 = (timestamp: number, secret = SECRET, body = payload) =>
  Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp }).split(',')[1];

const library = (header: string) => {
  try {
    Stripe.webhooks.constructEvent(payload, header, SECRET, 300);
    return true;
  } catch {
    return false;
  }
};
const ours = (header: string) => {
  try {
    verifyStripeWebhook(payload, header, SECRET);
    return true;
  } catch {
    return false;
  }
};

describe('Stripe-Signature', () => {
  const t = now();
  test.each([
    ['valid', `t=${t},${v1(t)}`],
    ['valid among others', `t=${t},v1=${'0'.repeat(64)},${v1(t)},v0=abc`],
    ['signed with another secret', `t=${t},${v1(t, 'whsec_other')}`],
    ['for another payload', `t=${t},${v1(t, SECRET, '{}')}`],
    ['another timestamp than signed', `t=${t + 1},${v1(t)}`],
    ['stale', `t=${t - 400},${v1(t - 400)}`],
    ['only v0', `t=${t},v0=${v1(t).slice(3)}`],
    ['no timestamp', v1(t)],
    ['empty', ''],
    ['truncated signature', `t=${t},${v1(t).slice(0, 40)}`],
  ])('%s: as the library decides', (_label, header) => {
    expect(ours(header)).toBe(library(header));
  });
});
