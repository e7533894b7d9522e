import { join } from 'node:path';
import { LOCAL_TELEPHONY_AUTH_TOKEN } from '../../../functions/providers/telephony/index.js';
import { startTelephonySimulator, type TelephonySimulator } from '../simulators/telephony/server.js';
import { registerLocalService } from '../services.js';

/**
 * The local telephony provider (lib/local/simulators/telephony/server.ts): provisions numbers
 * and plays calls out through the gateway's /webhooks/telephony/voice, signed with TELEPHONY_AUTH_TOKEN.
 */
let simulator: TelephonySimulator | undefined;

registerLocalService({
  name: 'telephony-simulator',
  async start(context) {
    const authToken =
      context.env.TELEPHONY_AUTH_TOKEN || process.env.TELEPHONY_AUTH_TOKEN || LOCAL_TELEPHONY_AUTH_TOKEN;
    const timeScale = Number(context.env.SIMULATOR_TIME_SCALE) || 20;
    const outboxPath = join(context.stateDir, 'outbox', 'telephony.jsonl');
    simulator = await startTelephonySimulator({
      gatewayUrl: context.webhooksUrl,
      timeScale,
      authToken,
      outboxPath,
    });
    return {
      url: simulator.url,
      port: simulator.port,
      env: { TELEPHONY_SIMULATOR_URL: simulator.url, TELEPHONY_AUTH_TOKEN: authToken },
      description: `calls play out at ${timeScale}x through /webhooks/telephony/voice; voicemails and whispers in ${outboxPath}`,
    };
  },
  async stop() {
    await simulator?.stop();
    simulator = undefined;
  },
  // Calls still playing or callbacks on their way keep the stack from being quiescent.
  activity: () => simulator?.activity(),
});
