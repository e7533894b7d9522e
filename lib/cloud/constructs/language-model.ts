import { Arn, ArnFormat, Aws } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { DEFAULT_BEDROCK_MODEL } from '../../../functions/providers/llm/index.js';

/**
 * The language model the functions with `languageModel` access ask (functions/providers/llm): Amazon
 * Bedrock in the cloud by default, or an OpenAI-compatible server reachable from Lambda.
 */
export type LanguageModelSettings =
  { provider: 'bedrock'; model: string } | { provider: 'openai'; model: string; baseUrl: string };

export const DEFAULT_LANGUAGE_MODEL: LanguageModelSettings = {
  provider: 'bedrock',
  model: DEFAULT_BEDROCK_MODEL,
};

/**
 * Prefixes of Bedrock's system-defined cross-region inference profiles (`us.amazon.nova-lite-v1:0`):
 * the request goes to the profile in this region, which routes it to the foundation model in one of
 * the geography's regions.
 */
const CROSS_REGION_PREFIX = /^(us|us-gov|eu|apac|jp|au|ca|global)\.(.+)$/;

/** LLM_PROVIDER, LLM_MODEL and, for an OpenAI-compatible server, LLM_BASE_URL. */
export function languageModelEnvironment(settings: LanguageModelSettings): Record<string, string> {
  return {
    LLM_PROVIDER: settings.provider,
    LLM_MODEL: settings.model,
    ...(settings.provider === 'openai' ? { LLM_BASE_URL: settings.baseUrl } : {}),
  };
}

/** Converse is bedrock:InvokeModel, ConverseStream bedrock:InvokeModelWithResponseStream. */
export const BEDROCK_INVOKE_ACTIONS = ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'];

/** The foundation model's ARN in `region` (empty for the global profile's destinations). */
const foundationModelArn = (modelId: string, region: string): string =>
  Arn.format({
    partition: Aws.PARTITION,
    service: 'bedrock',
    region,
    account: '',
    resource: 'foundation-model',
    resourceName: modelId,
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });

/**
 * What invoking `modelId` from this region takes, and nothing more:
 * - a foundation model id (`amazon.nova-lite-v1:0`): that model in this region;
 * - a cross-region inference profile id (`eu.amazon.nova-lite-v1:0`): the profile in this region, and the
 *   foundation model in whichever region the profile routes to — which AWS may extend, so the region is a
 *   wildcard — only when the request comes through that very profile (`bedrock:InferenceProfileArn`).
 * Model ARNs (provisioned throughput, application inference profiles) are refused: name the model.
 */
export function bedrockInvokeStatements(modelId: string): iam.PolicyStatement[] {
  if (modelId.startsWith('arn:')) {
    throw new Error(
      `context llmModel must be a Bedrock model id or inference profile id, not an ARN: ${modelId}`,
    );
  }
  const profile = CROSS_REGION_PREFIX.exec(modelId);
  if (!profile) {
    return [
      new iam.PolicyStatement({
        actions: BEDROCK_INVOKE_ACTIONS,
        resources: [foundationModelArn(modelId, Aws.REGION)],
      }),
    ];
  }
  const [, geography, foundationModel] = profile;
  const profileArn = Arn.format({
    partition: Aws.PARTITION,
    service: 'bedrock',
    region: Aws.REGION,
    account: Aws.ACCOUNT_ID,
    resource: 'inference-profile',
    resourceName: modelId,
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
  return [
    new iam.PolicyStatement({ actions: BEDROCK_INVOKE_ACTIONS, resources: [profileArn] }),
    new iam.PolicyStatement({
      actions: BEDROCK_INVOKE_ACTIONS,
      resources: [
        foundationModelArn(foundationModel, '*'),
        ...(geography === 'global' ? [foundationModelArn(foundationModel, '')] : []),
      ],
      conditions: { StringEquals: { 'bedrock:InferenceProfileArn': profileArn } },
    }),
  ];
}

/** The IAM resource strings of the region-wildcard grant, as cdk-nag names them (for its suppression). */
export function crossRegionWildcards(modelId: string): string[] {
  const profile = CROSS_REGION_PREFIX.exec(modelId);
  if (!profile) return [];
  return [`Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${profile[2]}`];
}
