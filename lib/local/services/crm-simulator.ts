import { join } from 'node:path';
import { startCrmSimulator, type CrmSimulator } from '../simulators/crm/server.js';
import { registerLocalService } from '../services.js';

/**
 * The demo CRM (lib/local/simulators/crm/server.ts): listings and contacts with a change feed, read
 * by the `demo_crm` integrations' adapter at CRM_SIMULATOR_URL; `npm run cli -- crm …` changes it.
 */
let simulator: CrmSimulator | undefined;

registerLocalService({
  name: 'crm',
  async start(ctx) {
    simulator = await startCrmSimulator({
      stateFile: ctx.inMemory ? undefined : join(ctx.stateDir, 'crm-simulator.json'),
    });
    return {
      url: simulator.url,
      port: simulator.port,
      env: { CRM_SIMULATOR_URL: simulator.url },
      description: 'demo CRM: listings and contacts with a change feed (npm run cli -- crm …)',
    };
  },
  async stop() {
    await simulator?.stop();
    simulator = undefined;
  },
});
