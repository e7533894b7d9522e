import * as z from 'zod';
import { secretString } from '../../platform/secrets.js';
import { DemoCrm } from './demo-crm.js';
import { HubSpotCrm } from './hubspot.js';
import type { CrmProvider } from './port.js';

export * from './port.js';

export const CRM_PROVIDERS = ['demo_crm', 'hubspot'] as const;
export type CrmProviderName = (typeof CRM_PROVIDERS)[number];

/** An integration's config, by provider (checked when the integration is created). */
export const DemoCrmConfig = z.strictObject({
  /** The demo CRM's account to read (each its own listings and contacts); default `demo`. */
  account: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('demo'),
});
export const HubSpotConfig = z.strictObject({
  /** The key of the access token in the `crm` secret's `hubspot` object. */
  account: z.string().trim().min(1).max(64),
  /** The HubSpot custom object that holds listings (e.g. `p_listings`); none: contacts only. */
  listing_object_type: z.string().trim().min(1).max(100).optional(),
});
export const CRM_CONFIGS = { demo_crm: DemoCrmConfig, hubspot: HubSpotConfig } as const;

const Env = z.object({
  CRM_SIMULATOR_URL: z.string().optional(),
  /** How long a read of the CRM may take (ms); default 5000. */
  CRM_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5000),
});

/** The adapter of an integration (a new one per call: cheap, and each holds its integration's config). */
export function crmProvider(provider: CrmProviderName, config: Record<string, unknown>): CrmProvider {
  const env = Env.parse(process.env);
  if (provider === 'hubspot') {
    const parsed = HubSpotConfig.parse(config);
    return new HubSpotCrm({
      timeoutMs: env.CRM_TIMEOUT_MS,
      listingObjectType: parsed.listing_object_type,
      accessToken: async () => {
        const secret = JSON.parse(await secretString('crm')) as { hubspot?: Record<string, string> };
        const token = secret.hubspot?.[parsed.account];
        if (!token) throw new Error(`the crm secret has no HubSpot token for account ${parsed.account}`);
        return token;
      },
    });
  }
  const parsed = DemoCrmConfig.parse(config);
  return new DemoCrm({ url: env.CRM_SIMULATOR_URL, account: parsed.account, timeoutMs: env.CRM_TIMEOUT_MS });
}
