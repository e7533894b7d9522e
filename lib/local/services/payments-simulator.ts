import { join } from 'node:path';
import { startPaymentsSimulator, type PaymentsSimulator } from '../simulators/payments/server.js';
import { registerLocalService } from '../services.js';

/**
 * The local payment provider (lib/local/simulators/payments/server.ts): the simulator
 * adapter calls it as the Stripe adapter calls Stripe, and it sends Stripe-signed events to
 * POST /webhooks/billing. Its URL and its webhook signing secret (new each start) reach the
 * handlers, the CLI and the tests through the stack's env: PAYMENTS_SIMULATOR_URL, PAYMENTS_WEBHOOK_SECRET.
 */
let simulator: PaymentsSimulator | undefined;

registerLocalService({
  name: 'payments',
  async start(ctx) {
    simulator = await startPaymentsSimulator({
      webhookUrl: `${ctx.webhooksUrl}/webhooks/billing`,
      stateFile: ctx.inMemory ? undefined : join(ctx.stateDir, 'payments-simulator.json'),
    });
    return {
      url: simulator.url,
      port: simulator.port,
      env: { PAYMENTS_SIMULATOR_URL: simulator.url, PAYMENTS_WEBHOOK_SECRET: simulator.webhookSecret },
      description:
        'simulated payment provider: checkouts pay at once; Stripe-signed events to /webhooks/billing',
    };
  },
  async stop() {
    await simulator?.stop();
    simulator = undefined;
  },
});
