import { join } from 'node:path';
import { LOCAL_TELEPHONY_AUTH_TOKEN } from '../../../functions/providers/telephony/index.js';
import { startSmsSimulator, type SmsSimulator } from '../simulators/sms/server.js';
import { registerLocalService } from '../services.js';

/**
 * The local SMS provider (lib/local/simulators/sms/server.ts): takes outbound messages into a
 * readable outbox (`<state dir>/outbox/sms.jsonl`, `GET /messages`), sends their signed delivery
 * callbacks, and delivers signed inbound messages to /webhooks/telephony/sms (`npm run cli -- sms
 * receive`). It signs with the telephony token, as Twilio signs both with the account's auth token.
 */
let simulator: SmsSimulator | undefined;

registerLocalService({
  name: 'sms-simulator',
  async start(context) {
    const authToken =
      context.env.TELEPHONY_AUTH_TOKEN || process.env.TELEPHONY_AUTH_TOKEN || LOCAL_TELEPHONY_AUTH_TOKEN;
    const outboxPath = join(context.stateDir, 'outbox', 'sms.jsonl');
    simulator = await startSmsSimulator({ gatewayUrl: context.webhooksUrl, authToken, outboxPath });
    return {
      url: simulator.url,
      port: simulator.port,
      env: {
        SMS_SIMULATOR_URL: simulator.url,
        TELEPHONY_AUTH_TOKEN: authToken,
        LOCAL_STATE_DIR: context.stateDir,
      },
      description: `SMS outbox ${outboxPath}; delivery callbacks and inbound SMS through /webhooks/telephony/sms`,
    };
  },
  async stop() {
    await simulator?.stop();
    simulator = undefined;
  },
  // Delivery callbacks still to send keep the stack from being quiescent.
  activity: () => simulator?.activity(),
});
