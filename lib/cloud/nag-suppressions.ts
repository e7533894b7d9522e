/** cdk-nag suppressions: each one names what it covers and why it is acceptable here. */
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { NagSuppressions } from 'cdk-nag';
import type { FunctionSpec } from './catalog-types.js';
import { crossRegionWildcards } from './constructs/language-model.js';
import type { ServiceFunction } from './constructs/service-function.js';
import type { VoiceAgentStack } from './stack.js';

/** Every route of the HTTP API, wherever its domain's nested stack puts it. */
export const AUTHORISATION_IN_FUNCTIONS = {
  id: 'AwsSolutions-APIG4',
  reason:
    'Authorisation is done inside each function by the shared http middleware (functions/platform/http/' +
    'authenticate.ts): a route accepts a Cognito JWT, an API key, or neither (health, OpenAPI, public), ' +
    'per route as declared in the catalog. API keys are looked up in the table, which an API Gateway ' +
    'JWT authoriser cannot do, and 401/403 bodies must follow the API contract.',
};

/**
 * Active tracing (lib/cloud/constructs/service-function.ts): the one `Resource: *` statement of a role,
 * which test/infra/stack.test.ts holds to the two X-Ray write actions.
 */
export const X_RAY_WRITES = {
  id: 'AwsSolutions-IAM5',
  reason:
    'Active X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level ' +
    'permissions, so Lambda requires them on `*` (the statement CDK adds for Tracing.ACTIVE); they only write ' +
    "the function's own trace segments, and no other action of the role is on `*`.",
  appliesTo: ['Resource::*'],
};

/** The wildcards CDK's table and bucket grants produce, each scoped to this stack's one table or bucket. */
export function suppressGrantWildcardsFor(
  stack: VoiceAgentStack,
  fn: ServiceFunction,
  spec: FunctionSpec,
): void {
  const role = fn.role;
  if (!role) return;
  NagSuppressions.addResourceSuppressions(role, [X_RAY_WRITES], true);
  const tableId = stack.getLogicalId(stack.table.node.defaultChild as dynamodb.CfnTable);
  const bucketId = stack.getLogicalId(stack.bucket.node.defaultChild as s3.CfnBucket);
  if (spec.access.table) {
    NagSuppressions.addResourceSuppressions(
      role,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason:
            'Table grant from the catalog (access.table): `<table>/index/*` covers only the global secondary ' +
            "indexes of this stack's single table (gsi1, gsi2), which every query by a secondary key needs.",
          appliesTo: [`Resource::<${tableId}.Arn>/index/*`],
        },
      ],
      true,
    );
  }
  if (spec.access.bucket) {
    const readWildcards = ['Action::s3:GetObject*', 'Action::s3:GetBucket*', 'Action::s3:List*'];
    const writeWildcards = ['Action::s3:DeleteObject*', 'Action::s3:Abort*'];
    NagSuppressions.addResourceSuppressions(
      role,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason:
            'Bucket grant from the catalog (access.bucket): object keys are generated per recording/upload, so ' +
            "access is to `<recordings bucket>/*` of this one bucket; the action groups are CDK's read " +
            '(GetObject*, GetBucket*, List*) and write (DeleteObject*, Abort* for multipart uploads) sets, ' +
            'limited to that same bucket.',
          appliesTo: [
            `Resource::<${bucketId}.Arn>/*`,
            ...readWildcards,
            ...(spec.access.bucket === 'readwrite' ? writeWildcards : []),
          ],
        },
      ],
      true,
    );
  }
  if (spec.access.manageConnections) {
    const apiId = stack.getLogicalId(stack.voiceRelay.api.node.defaultChild as apigwv2.CfnApi);
    NagSuppressions.addResourceSuppressions(
      role,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason:
            'Relay grant from the catalog (access.manageConnections): execute-api:ManageConnections on ' +
            "`<relay API>/live/*/@connections/*` of this stack's one WebSocket API and stage; connection ids " +
            'are made by API Gateway per call, so they cannot be named in advance.',
          appliesTo: [
            // Region and account appear as tokens or as the values of the stack's env.
            {
              regex: `/^Resource::arn:<AWS::Partition>:execute-api:[^/]+:<${apiId}>\\/live\\/\\*\\/@connections\\/\\*$/`,
            },
          ],
        },
      ],
      true,
    );
  }
  if (spec.access.languageModel && stack.piiDetector === 'comprehend') {
    NagSuppressions.addResourceSuppressions(
      role,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason:
            'comprehend:DetectPiiEntities (PII redaction, context piiDetector=comprehend) supports no ' +
            'resource-level permission: IAM accepts only "*" for it; the statement names this one action.',
          appliesTo: ['Resource::*'],
        },
      ],
      true,
    );
  }
  const wildcards = crossRegionWildcards(stack.languageModel.model);
  if (spec.access.languageModel && stack.languageModel.provider === 'bedrock' && wildcards.length > 0) {
    NagSuppressions.addResourceSuppressions(
      role,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason:
            'Model grant from the catalog (access.languageModel) for a cross-region inference profile: the ' +
            "profile routes each request to the same foundation model in one of its geography's regions, " +
            'a set AWS extends, so the region is a wildcard; the statement holds only under the condition ' +
            'bedrock:InferenceProfileArn = this profile, and names this one model.',
          appliesTo: wildcards,
        },
      ],
      true,
    );
  }
}

export function suppressStackFindings(stack: VoiceAgentStack): void {
  NagSuppressions.addResourceSuppressions(stack.httpApi, [AUTHORISATION_IN_FUNCTIONS], true);
  NagSuppressions.addResourceSuppressions(stack.userPool, [
    {
      id: 'AwsSolutions-COG2',
      reason:
        'MFA is optional (TOTP, no SMS): dashboard users self-sign-up with email verification and can enrol ' +
        'an authenticator app; requiring MFA at sign-up would block the self sign-up flow of the product.',
    },
    {
      id: 'AwsSolutions-COG8',
      reason:
        'The Essentials feature plan is used: the Plus plan (threat protection) is billed per monthly active ' +
        'user and is an operator decision per deployment; strong password policy, email verification and ' +
        'optional TOTP MFA are enforced.',
    },
  ]);
  for (const secret of Object.values(stack.secrets)) {
    NagSuppressions.addResourceSuppressions(secret, [
      {
        id: 'AwsSolutions-SMG4',
        reason:
          'Provider credentials (telephony, payments, identity webhook signing secret) are issued by the third ' +
          'party and rotated in its console; the operator then puts the new value. No rotation Lambda can ' +
          'create them.',
      },
    ]);
  }
}
