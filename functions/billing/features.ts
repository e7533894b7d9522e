import { paymentRequired } from '../platform/errors.js';
import { BillingAccountEntity } from './entities.js';
import { PLANS, type Feature } from './plans.js';

/** How a feature is named in `Your plan does not include <feature>` (docs/api.md plan gates). */
const FEATURE_NAMES: Record<Feature, string> = {
  apiKeys: 'API keys',
  workflows: 'workflows',
  batchOutbound: 'batch outbound',
  integrations: 'integrations',
};

export const featureNotIncluded = (feature: Feature): string =>
  `Your plan does not include ${FEATURE_NAMES[feature]}`;

/** Whether the organisation's plan includes the feature. */
export async function planIncludes(organisationId: string, feature: Feature): Promise<boolean> {
  const { data: account } = await BillingAccountEntity.get({ organisationId }).go();
  const plan = account ? PLANS[account.plan] : undefined;
  return plan?.features[feature] === true;
}

/** 402 `Your plan does not include <feature>` unless the organisation's plan includes it. */
export async function requireFeature(organisationId: string, feature: Feature): Promise<void> {
  if (!(await planIncludes(organisationId, feature))) throw paymentRequired(featureNotIncluded(feature));
}
