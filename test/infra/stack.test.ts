/**
 * CDK template assertions for lib/cloud/stack.ts, against the real catalog and against a fixture catalog that
 * exercises every trigger and access kind (the real catalog may not have a queue consumer, a schedule or
 * a webhook yet). Asset bundling is skipped through the app context, so no esbuild run and no Docker.
 */
import { Aspects } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { catalog } from '../../lib/cloud/catalog.js';
import type { FunctionSpec } from '../../lib/cloud/catalog-types.js';
import {
  BUCKET,
  QUEUES,
  TABLE,
  dlqName,
  queueKeys,
  queueUrlEnv,
  webhookUrlEnv,
} from '../../functions/platform/resources.js';
import { secretArnEnv } from '../../lib/cloud/secrets.js';
import { DEFAULT_BEDROCK_MODEL } from '../../functions/providers/llm/index.js';
import {
  REGION,
  STACK_NAME,
  asArray,
  flat,
  functionId,
  newStack,
  ofType,
  props,
  refId,
  resolved,
  synth,
  type PolicyStatement,
  type Resources,
} from './cloud-template.js';

/** Every IAM action granted to a function's execution role, with the resources of each statement. */
function grantedStatements(resources: Resources, fnId: string): PolicyStatement[] {
  const roleId = refId(props(resources[fnId]).Role);
  expect(roleId).toBeDefined();
  return ofType(resources, 'AWS::IAM::Policy')
    .filter(([, p]) => asArray(props<{ Roles?: unknown[] }>(p).Roles).some((r) => refId(r) === roleId))
    .flatMap(
      ([, p]) => props<{ PolicyDocument: { Statement: PolicyStatement[] } }>(p).PolicyDocument.Statement,
    )
    .filter((s) => s.Effect === 'Allow');
}

const grantedActions = (resources: Resources, fnId: string): string[] =>
  grantedStatements(resources, fnId).flatMap((s) => asArray(s.Action));

/** What active tracing grants every role, on `*` (X-Ray has no resource-level permissions). */
const X_RAY_WRITE_ACTIONS = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'];

const environmentOf = (resources: Resources, fnId: string): Record<string, unknown> =>
  props<{ Environment?: { Variables?: Record<string, unknown> } }>(resources[fnId]).Environment?.Variables ??
  {};

// A fixture catalog exercising each trigger and access kind, on an existing handler file.
const ENTRY = catalog[0].entry;
const fixture: FunctionSpec[] = [
  {
    id: 'FixtureApi',
    entry: ENTRY,
    group: 'agents',
    http: [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}/things',
        summary: 'list',
        auth: 'user_or_api_key',
        access: { table: 'readwrite' },
      },
      {
        method: 'POST',
        path: '/api/v1/workspaces/{workspace_id}/things',
        summary: 'create',
        auth: 'user',
        access: { table: 'readwrite' },
      },
    ],
    access: {
      table: 'readwrite',
      bucket: 'readwrite',
      sendsTo: ['calls', 'imports'],
      secrets: ['telephony'],
    },
  },
  {
    id: 'FixtureReader',
    entry: ENTRY,
    group: 'public',
    http: [
      {
        method: 'GET',
        path: '/r/{token}',
        summary: 'public read',
        auth: 'none',
        access: { table: 'readwrite' },
      },
    ],
    access: { table: 'read', bucket: 'read' },
  },
  {
    id: 'FixtureConsumer',
    entry: ENTRY,
    group: 'post-call',
    queue: { name: 'postCall', batchSize: 10 },
    access: { table: 'readwrite', sendsTo: ['webhookDelivery'], email: true },
    timeoutSeconds: 60,
  },
  {
    id: 'FixtureBigBatchConsumer',
    entry: ENTRY,
    group: 'post-call',
    queue: { name: 'imports', batchSize: 100 },
    access: { table: 'readwrite' },
  },
  {
    id: 'FixtureJob',
    entry: ENTRY,
    group: 'billing',
    schedule: { expression: 'rate(1 hour)', localEverySeconds: 10 },
    access: { table: 'readwrite', sendsTo: ['campaigns'] },
    memoryMb: 1024,
  },
  {
    id: 'FixtureWebhook',
    entry: ENTRY,
    group: 'provider-webhooks',
    functionUrl: { path: '/webhooks/telephony/status' },
    access: { table: 'readwrite', secrets: ['telephony', 'identity-webhook'] },
  },
];

describe.each([
  ['the catalog', catalog],
  ['a fixture catalog with every trigger kind', fixture],
])('VoiceAgentStack from %s', (_name, specs) => {
  const { template, resources } = synth(specs);

  test('one DynamoDB table: pk/sk strings, two ALL-projection GSIs, TTL, PITR, on-demand, retained', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    const [[, table]] = ofType(resources, 'AWS::DynamoDB::Table');
    expect(table.DeletionPolicy).toBe('Retain');
    const p = props<{
      KeySchema: unknown[];
      AttributeDefinitions: { AttributeName: string; AttributeType: string }[];
      GlobalSecondaryIndexes: {
        IndexName: string;
        KeySchema: unknown[];
        Projection: { ProjectionType: string };
      }[];
      TimeToLiveSpecification: unknown;
      PointInTimeRecoverySpecification: unknown;
      BillingMode: string;
    }>(table);
    expect(p.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(p.AttributeDefinitions.every((a) => a.AttributeType === 'S')).toBe(true);
    expect(p.GlobalSecondaryIndexes).toHaveLength(2);
    for (const index of TABLE.indexes) {
      expect(p.GlobalSecondaryIndexes).toContainEqual({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      });
    }
    expect(p.TimeToLiveSpecification).toEqual({ AttributeName: 'expires_at', Enabled: true });
    expect(p.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(p.BillingMode).toBe('PAY_PER_REQUEST');
  });

  test('every queue has its own DLQ (maxReceiveCount >= 5), TLS-only access and SQS-managed encryption', () => {
    template.resourceCountIs('AWS::SQS::Queue', queueKeys.length * 2);
    const queues = ofType(resources, 'AWS::SQS::Queue');
    const byName = (name: string) => {
      const found = queues.filter(([, q]) => props(q).QueueName === `${STACK_NAME}-${name}`);
      expect(found).toHaveLength(1);
      return found[0];
    };
    const tlsOnlyQueueIds = ofType(resources, 'AWS::SQS::QueuePolicy')
      .filter(([, p]) =>
        props<{ PolicyDocument: { Statement: PolicyStatement[] } }>(p).PolicyDocument.Statement.some(
          (s) => s.Effect === 'Deny' && s.Condition?.Bool?.['aws:SecureTransport'] === 'false',
        ),
      )
      .flatMap(([, p]) => asArray(props<{ Queues: unknown[] }>(p).Queues).map(refId));

    for (const key of queueKeys) {
      const [queueId, queue] = byName(QUEUES[key].name);
      const [dlqId, dlq] = byName(dlqName(key));
      const q = props<{
        RedrivePolicy: { deadLetterTargetArn: unknown; maxReceiveCount: number };
        VisibilityTimeout: number;
      }>(queue);
      expect(refId(q.RedrivePolicy.deadLetterTargetArn)).toBe(dlqId);
      expect(q.RedrivePolicy.maxReceiveCount).toBe(QUEUES[key].maxReceiveCount);
      expect(q.RedrivePolicy.maxReceiveCount).toBeGreaterThanOrEqual(5);
      expect(q.VisibilityTimeout).toBe(QUEUES[key].visibilityTimeoutSeconds);
      expect(props(dlq).MessageRetentionPeriod).toBe(14 * 24 * 3600);
      expect(props(dlq).RedrivePolicy).toBeUndefined();
      for (const [id, resource] of [
        [queueId, queue],
        [dlqId, dlq],
      ] as const) {
        expect(props(resource).SqsManagedSseEnabled).toBe(true);
        expect(tlsOnlyQueueIds).toContain(id);
      }
    }
  });

  test('each queue consumer: an event source mapping that reports partial batch failures, visibility >= 6x timeout', () => {
    const mappings = ofType(resources, 'AWS::Lambda::EventSourceMapping');
    const consumers = specs.filter((s) => s.queue);
    expect(mappings).toHaveLength(consumers.length);
    for (const spec of consumers) {
      const fnId = functionId(resources, spec);
      const found = mappings.filter(([, m]) => refId(props(m).FunctionName) === fnId);
      expect(found).toHaveLength(1);
      const m = props<{ EventSourceArn: unknown; BatchSize: number; FunctionResponseTypes: string[] }>(
        found[0][1],
      );
      expect(m.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
      expect(m.BatchSize).toBe(spec.queue!.batchSize);
      const queue = resources[refId(m.EventSourceArn)!];
      expect(props(queue).QueueName).toBe(`${STACK_NAME}-${QUEUES[spec.queue!.name].name}`);
      const timeout = props<{ Timeout: number }>(resources[fnId]).Timeout;
      expect(props<{ VisibilityTimeout: number }>(queue).VisibilityTimeout).toBeGreaterThanOrEqual(
        6 * timeout,
      );
      const actions = grantedActions(resources, fnId);
      expect(actions).toEqual(expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage']));
    }
  });

  test('the recordings bucket: recordings/ expire after 183 days, public access blocked, TLS-only, logged', () => {
    const buckets = ofType(resources, 'AWS::S3::Bucket');
    const withRecordingsRule = buckets.filter(([, b]) =>
      asArray(
        props<{ LifecycleConfiguration?: { Rules: { Prefix?: string }[] } }>(b).LifecycleConfiguration?.Rules,
      ).some((r) => r.Prefix === BUCKET.recordingsPrefix),
    );
    expect(withRecordingsRule).toHaveLength(1);
    const [bucketId, bucket] = withRecordingsRule[0];
    expect(bucket.DeletionPolicy).toBe('Retain');
    const p = props<{
      LifecycleConfiguration: { Rules: Record<string, unknown>[] };
      PublicAccessBlockConfiguration: unknown;
      BucketEncryption: unknown;
      LoggingConfiguration: { DestinationBucketName: unknown };
    }>(bucket);
    expect(p.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({ Prefix: 'recordings/', ExpirationInDays: 183, Status: 'Enabled' }),
    );
    expect(BUCKET.recordingRetentionDays).toBe(183);
    expect(p.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 },
        Status: 'Enabled',
      }),
    );
    expect(p.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(p.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    const logBucketId = refId(p.LoggingConfiguration.DestinationBucketName);
    expect(logBucketId).toBeDefined();
    expect(logBucketId).not.toBe(bucketId);

    const policies = ofType(resources, 'AWS::S3::BucketPolicy').filter(
      ([, bp]) => refId(props(bp).Bucket) === bucketId,
    );
    expect(policies).toHaveLength(1);
    const statements = props<{ PolicyDocument: { Statement: PolicyStatement[] } }>(policies[0][1])
      .PolicyDocument.Statement;
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Action: 's3:*',
        Principal: { AWS: '*' },
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    );
  });

  test('a Cognito user pool (email sign-in, self sign-up, verified email, strong passwords) and a SRP client', () => {
    template.resourceCountIs('AWS::Cognito::UserPool', 1);
    template.hasResourceProperties('AWS::Cognito::UserPool', {
      UsernameAttributes: ['email'],
      AutoVerifiedAttributes: ['email'],
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: false },
      Policies: {
        PasswordPolicy: Match.objectLike({
          MinimumLength: 12,
          RequireLowercase: true,
          RequireUppercase: true,
          RequireNumbers: true,
          RequireSymbols: true,
        }),
      },
    });
    template.resourceCountIs('AWS::Cognito::UserPoolClient', 1);
    template.hasResourceProperties('AWS::Cognito::UserPoolClient', {
      GenerateSecret: false,
      ExplicitAuthFlows: Match.arrayWith(['ALLOW_USER_SRP_AUTH']),
    });
    const flows = props<{ ExplicitAuthFlows: string[] }>(
      ofType(resources, 'AWS::Cognito::UserPoolClient')[0][1],
    ).ExplicitAuthFlows;
    expect(flows).not.toContain('ALLOW_USER_PASSWORD_AUTH');
  });

  test('exactly one Lambda function per catalog entry, on Node.js 22 or newer, arm64, with its timeout and memory', () => {
    const catalogFunctions = ofType(resources, 'AWS::Lambda::Function').filter(([, f]) =>
      String(props(f).Description ?? '').startsWith('voice-agent/'),
    );
    expect(catalogFunctions).toHaveLength(specs.length);
    for (const spec of specs) {
      const fn = props<{
        Runtime: string;
        Architectures: string[];
        Handler: string;
        Timeout: number;
        MemorySize: number;
      }>(resources[functionId(resources, spec)]);
      const major = Number(/^nodejs(\d+)\.x$/.exec(fn.Runtime)?.[1]);
      expect(major).toBeGreaterThanOrEqual(22);
      expect(fn.Architectures).toEqual(['arm64']);
      expect(fn.Handler).toBe('index.handler');
      const defaultTimeout = spec.queue || spec.schedule ? 30 : 10;
      expect(fn.Timeout).toBe(spec.timeoutSeconds ?? defaultTimeout);
      expect(fn.MemorySize).toBe(spec.memoryMb ?? 512);
    }
  });

  test('every function logs to its own log group with a retention', () => {
    for (const spec of specs) {
      const fn = props<{ LoggingConfig?: { LogGroup?: unknown } }>(resources[functionId(resources, spec)]);
      const logGroup = resources[refId(fn.LoggingConfig?.LogGroup)!];
      expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
      expect(props(logGroup).RetentionInDays).toBeGreaterThan(0);
    }
  });

  test('environment: shared settings, and table/bucket/queue/secret settings only where the catalog grants access', () => {
    for (const spec of specs) {
      const env = environmentOf(resources, functionId(resources, spec));
      expect(env).toMatchObject({
        NODE_OPTIONS: '--enable-source-maps',
        STAGE: 'cloud',
        POWERTOOLS_SERVICE_NAME: 'voice-agent',
      });
      expect(JSON.stringify(env.JWT_ISSUER)).toContain(`https://cognito-idp.${REGION}.amazonaws.com/`);
      expect(refId((env.JWT_ISSUER as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1][1])).toMatch(
        /^UserPool/,
      );
      expect(JSON.stringify(env.JWT_JWKS_URI)).toContain('/.well-known/jwks.json');
      expect(refId(env.JWT_CLIENT_ID)).toMatch(/^UserPoolDashboardClient/);
      expect(JSON.stringify(env.PUBLIC_BASE_URL)).toContain('HttpApi');
      // Invitation emails link to the dashboard's invitation page (its CloudFront address).
      expect(JSON.stringify(env.DASHBOARD_URL)).toContain('DashboardDistribution');

      expect('TABLE_NAME' in env).toBe(Boolean(spec.access.table));
      if (spec.access.table) expect(resources[refId(env.TABLE_NAME)!].Type).toBe('AWS::DynamoDB::Table');
      expect('BUCKET_NAME' in env).toBe(Boolean(spec.access.bucket));

      const queueVars = Object.keys(env)
        .filter((k) => k.startsWith('QUEUE_URL_'))
        .sort();
      expect(queueVars).toEqual((spec.access.sendsTo ?? []).map(queueUrlEnv).sort());
      for (const key of spec.access.sendsTo ?? []) {
        expect(props(resources[refId(env[queueUrlEnv(key)])!]).QueueName).toBe(
          `${STACK_NAME}-${QUEUES[key].name}`,
        );
      }
      const secretVars = Object.keys(env)
        .filter((k) => k.startsWith('SECRET_ARN_'))
        .sort();
      expect(secretVars).toEqual((spec.access.secrets ?? []).map(secretArnEnv).sort());
    }
  });

  test('every catalog HTTP route is an API Gateway route `METHOD /path` integrated with its own function', () => {
    const routes = ofType(resources, 'AWS::ApiGatewayV2::Route').filter(([, r]) =>
      refId(props(r).ApiId)?.startsWith('HttpApi'),
    );
    const expected = specs.flatMap((s) =>
      (s.http ?? []).map((r) => ({ spec: s, routeKey: `${r.method} ${r.path}` })),
    );
    expect(routes).toHaveLength(expected.length);
    for (const { spec, routeKey } of expected) {
      const found = routes.filter(([, r]) => props(r).RouteKey === routeKey);
      expect(found).toHaveLength(1);
      const target = props<{ Target: { 'Fn::Join': [string, unknown[]] } }>(found[0][1]).Target[
        'Fn::Join'
      ][1];
      const integration = resources[refId(target[1])!];
      expect(integration.Type).toBe('AWS::ApiGatewayV2::Integration');
      expect(refId(props(integration).IntegrationUri)).toBe(functionId(resources, spec));
    }
  });

  test('the default stage has access logging and throttling', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: {
        DestinationArn: Match.anyValue(),
        Format: Match.stringLikeRegexp('\\$context.requestId'),
      },
      DefaultRouteSettings: { ThrottlingRateLimit: Match.anyValue(), ThrottlingBurstLimit: Match.anyValue() },
    });
  });

  test('every functionUrl entry has a Lambda function URL (and an output); no other function has one', () => {
    const urls = ofType(resources, 'AWS::Lambda::Url');
    const urlSpecs = specs.filter((s) => s.functionUrl);
    expect(urls).toHaveLength(urlSpecs.length);
    const outputs = template.toJSON().Outputs as Record<string, unknown>;
    for (const spec of urlSpecs) {
      const fnId = functionId(resources, spec);
      const found = urls.filter(([, u]) => refId(props(u).TargetFunctionArn) === fnId);
      expect(found).toHaveLength(1);
      expect(props(found[0][1]).AuthType).toBe('NONE');
      expect(outputs[`FunctionUrl${spec.id}`]).toBeDefined();
    }
  });

  test('only functions that send email may call ses:SendEmail, on the sender identity alone, with EMAIL_FROM set', () => {
    for (const spec of specs) {
      const fn = resources[functionId(resources, spec)];
      const env =
        props<{ Environment?: { Variables?: Record<string, unknown> } }>(fn).Environment?.Variables ?? {};
      const statements = JSON.stringify(
        ofType(resources, 'AWS::IAM::Policy').filter(([, p]) =>
          asArray(props<{ Roles: unknown[] }>(p).Roles).some((r) =>
            JSON.stringify(r).includes(refId(props<{ Role: unknown }>(fn).Role) ?? '?'),
          ),
        ),
      );
      if (spec.access.email) {
        expect(env.EMAIL_FROM).toEqual(expect.stringContaining('@'));
        expect(statements).toContain('ses:SendEmail');
        expect(statements).toContain(':identity/example.com');
      } else {
        expect(env.EMAIL_FROM).toBeUndefined();
        expect(statements).not.toContain('ses:');
      }
    }
  });

  test('every function that is not a webhook learns each webhook URL; a webhook only those it hands out (no cycle)', () => {
    const urlSpecs = specs.filter((s) => s.functionUrl);
    for (const spec of specs) {
      const fn = resources[functionId(resources, spec)];
      const env =
        props<{ Environment?: { Variables?: Record<string, unknown> } }>(fn).Environment?.Variables ?? {};
      for (const urlSpec of urlSpecs) {
        const name = webhookUrlEnv(urlSpec.functionUrl!.path);
        const learns = !spec.functionUrl || !!spec.functionUrl.handsOut?.includes(urlSpec.functionUrl!.path);
        if (!learns) expect(env[name]).toBeUndefined();
        else expect(resolved(env[name])).toEqual({ 'Fn::GetAtt': [expect.any(String), 'FunctionUrl'] });
      }
    }
    // What a webhook hands out hands out nothing itself: no cycle.
    for (const spec of urlSpecs)
      for (const path of spec.functionUrl!.handsOut ?? [])
        expect(urlSpecs.find((s) => s.functionUrl!.path === path)?.functionUrl?.handsOut ?? []).toEqual([]);
  });

  test('every scheduled entry has an EventBridge rule with its expression targeting its function', () => {
    const rules = ofType(resources, 'AWS::Events::Rule');
    const scheduled = specs.filter((s) => s.schedule);
    expect(rules).toHaveLength(scheduled.length);
    for (const spec of scheduled) {
      const fnId = functionId(resources, spec);
      const found = rules.filter(([, r]) =>
        asArray(props<{ Targets: { Arn: unknown }[] }>(r).Targets).some((t) => refId(t.Arn) === fnId),
      );
      expect(found).toHaveLength(1);
      expect(props(found[0][1]).ScheduleExpression).toBe(spec.schedule!.expression);
      expect(props(found[0][1]).State).toBe('ENABLED');
    }
  });

  test('least privilege: each role holds only the actions its catalog access declares', () => {
    const writeActions = [
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
    ];
    for (const spec of specs) {
      const fnId = functionId(resources, spec);
      const statements = grantedStatements(resources, fnId);
      const actions = statements.flatMap((s) => asArray(s.Action));
      const { table, bucket, sendsTo = [], secrets = [] } = spec.access;

      if (!table) expect(actions.filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
      if (table === 'read') {
        expect(actions).toContain('dynamodb:GetItem');
        expect(actions).toContain('dynamodb:Query');
        for (const action of writeActions) expect(actions).not.toContain(action);
      }
      if (table === 'readwrite') expect(actions).toEqual(expect.arrayContaining(writeActions));
      if (!bucket) expect(actions.filter((a) => a.startsWith('s3:'))).toEqual([]);
      if (bucket === 'read') expect(actions.filter((a) => /^s3:(Put|Delete|Abort)/.test(a))).toEqual([]);
      if (bucket === 'readwrite') expect(actions).toContain('s3:PutObject');
      if (sendsTo.length === 0) expect(actions).not.toContain('sqs:SendMessage');
      if (!spec.queue) expect(actions).not.toContain('sqs:ReceiveMessage');
      if (secrets.length === 0) expect(actions.filter((a) => a.startsWith('secretsmanager:'))).toEqual([]);

      // Nothing is granted on "*" but X-Ray's trace writes: every other statement names this stack's resources.
      for (const statement of statements) {
        if (asArray(statement.Resource as unknown[]).includes('*'))
          expect(asArray(statement.Action).sort()).toEqual(X_RAY_WRITE_ACTIONS);
      }
      // The queues it may send to, and no other.
      const sendResources = statements
        .filter((s) => asArray(s.Action).includes('sqs:SendMessage'))
        .flatMap((s) => asArray(s.Resource as unknown[]).map(refId));
      const queueIds = sendsTo.map((key) => refId(environmentOf(resources, fnId)[queueUrlEnv(key)]));
      expect([...new Set(sendResources)].sort()).toEqual([...new Set(queueIds)].sort());
    }
  });

  test('the stack outputs the API URL, user pool, client, table and bucket', () => {
    const outputs = Object.keys(template.toJSON().Outputs as Record<string, unknown>);
    expect(outputs).toEqual(
      expect.arrayContaining(['ApiUrl', 'UserPoolId', 'UserPoolClientId', 'TableName', 'BucketName']),
    );
  });
});

describe('least privilege in the real catalog', () => {
  const { resources } = synth(catalog);

  test('a function whose routes declare no access has no DynamoDB, S3, SQS or Secrets Manager action', () => {
    const nothing: FunctionSpec = {
      id: 'Nothing',
      entry: ENTRY,
      group: 'public',
      http: [{ method: 'GET', path: '/api/v1/nothing', summary: 'nothing', auth: 'none', access: {} }],
      access: {},
    };
    const own = synth([nothing]).resources;
    const actions = grantedActions(own, functionId(own, nothing));
    expect(actions.filter((a) => /^(dynamodb|s3|sqs|secretsmanager):/.test(a))).toEqual([]);
    expect(actions.filter((a) => !a.startsWith('logs:')).sort()).toEqual(X_RAY_WRITE_ACTIONS);
    expect(Object.keys(environmentOf(own, functionId(own, nothing)))).not.toContain('TABLE_NAME');
  });

  test('a function with table read access cannot write items', () => {
    const readers = catalog.filter((s) => s.access.table === 'read');
    expect(readers.length).toBeGreaterThan(0);
    for (const spec of readers) {
      const actions = grantedActions(resources, functionId(resources, spec));
      expect(actions).toContain('dynamodb:GetItem');
      expect(actions).not.toContain('dynamodb:PutItem');
    }
  });
});

describe('the voice relay (WebSocket API) from the catalog', () => {
  const { template, resources } = synth(catalog);
  const relaySpecs = catalog.filter((s) => s.webSocket);
  const [[apiId, api]] = ofType(resources, 'AWS::ApiGatewayV2::Api').filter(
    ([, r]) => props(r).ProtocolType === 'WEBSOCKET',
  );
  const relayFn = () => functionId(resources, relaySpecs[0]);
  const manageStatements = (fnId: string) =>
    grantedStatements(resources, fnId).filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('execute-api:')),
    );
  const bedrockStatements = (res: Resources, fnId: string) =>
    grantedStatements(res, fnId).filter((s) => asArray(s.Action).some((a) => a.startsWith('bedrock:')));

  test('one WebSocket API, served by the catalog entry with webSocket routes', () => {
    expect(ofType(resources, 'AWS::ApiGatewayV2::Api').filter(([, r]) => r === api)).toHaveLength(1);
    expect(props(api).RouteSelectionExpression).toBe('$request.body.action');
    expect(relaySpecs.map((s) => s.id)).toEqual(['ConversationRelay']);
  });

  test('$connect, $default and $disconnect each go to the relay function through one Lambda proxy integration (29 s)', () => {
    const routes = ofType(resources, 'AWS::ApiGatewayV2::Route').filter(
      ([, r]) => refId(props(r).ApiId) === apiId,
    );
    expect(routes.map(([, r]) => props(r).RouteKey).sort()).toEqual(['$connect', '$default', '$disconnect']);
    const integrationIds = new Set<string>();
    for (const [, route] of routes) {
      const target = props<{ Target: { 'Fn::Join': [string, unknown[]] } }>(route).Target['Fn::Join'][1];
      integrationIds.add(refId(target[1])!);
    }
    expect(integrationIds.size).toBe(1);
    const integration = resources[[...integrationIds][0]];
    expect(integration.Type).toBe('AWS::ApiGatewayV2::Integration');
    expect(refId(props(integration).ApiId)).toBe(apiId);
    expect(props(integration).IntegrationType).toBe('AWS_PROXY');
    expect(props(integration).TimeoutInMillis).toBe(29000);
    expect(flat(props(integration).IntegrationUri)).toContain(`<${relayFn()}.Arn>/invocations`);
    // API Gateway may invoke the relay function, from this API only.
    const permissions = ofType(resources, 'AWS::Lambda::Permission').filter(
      ([, p]) =>
        refId(props(p).FunctionName) === relayFn() && flat(props(p).SourceArn).includes(`<${apiId}>`),
    );
    expect(permissions.length).toBeGreaterThan(0);
    for (const [, permission] of permissions) {
      expect(props(permission).Principal).toBe('apigateway.amazonaws.com');
      expect(flat(props(permission).SourceArn)).toMatch(
        new RegExp(`^arn:<AWS::Partition>:execute-api:[^/]+:<${apiId}>/\\*\\$`),
      );
    }
    // The relay function answers inside API Gateway's cut.
    expect(props<{ Timeout: number }>(resources[relayFn()]).Timeout).toBeLessThan(29);
  });

  test('the stage `live`: auto-deployed, throttled, access-logged (no frame bodies)', () => {
    const stages = ofType(resources, 'AWS::ApiGatewayV2::Stage').filter(
      ([, r]) => refId(props(r).ApiId) === apiId,
    );
    expect(stages).toHaveLength(1);
    const stage = props<{
      StageName: string;
      AutoDeploy: boolean;
      DefaultRouteSettings: { ThrottlingRateLimit: number; ThrottlingBurstLimit: number };
      AccessLogSettings: { DestinationArn: unknown; Format: string };
    }>(stages[0][1]);
    expect(stage.StageName).toBe('live');
    expect(stage.AutoDeploy).toBe(true);
    expect(stage.DefaultRouteSettings.ThrottlingRateLimit).toBeGreaterThan(0);
    expect(stage.DefaultRouteSettings.ThrottlingBurstLimit).toBeGreaterThan(0);
    expect(resources[refId(stage.AccessLogSettings.DestinationArn)!].Type).toBe('AWS::Logs::LogGroup');
    expect(stage.AccessLogSettings.Format).toContain('$context.connectionId');
    expect(stage.AccessLogSettings.Format).not.toMatch(/body/i);
    // WebSocket access logs need the account's API Gateway CloudWatch role.
    template.resourceCountIs('AWS::ApiGateway::Account', 1);
  });

  test('every function knows the relay URL; only manageConnections functions the management URL', () => {
    const relayUrl = `wss://<${apiId}>.execute-api.${REGION}.<AWS::URLSuffix>/live`;
    const managementUrl = `https://<${apiId}>.execute-api.${REGION}.<AWS::URLSuffix>/live`;
    for (const spec of catalog) {
      const env = environmentOf(resources, functionId(resources, spec));
      expect({ id: spec.id, url: flat(env.VOICE_RELAY_URL) }).toEqual({ id: spec.id, url: relayUrl });
      expect({
        id: spec.id,
        url: env.VOICE_RELAY_MANAGEMENT_URL && flat(env.VOICE_RELAY_MANAGEMENT_URL),
      }).toEqual({
        id: spec.id,
        url: spec.access.manageConnections ? managementUrl : undefined,
      });
    }
    // The ones that render ConversationRelay TwiML (relay-settings.ts) and the one that checks signatures.
    for (const id of ['DispatchCalls', 'TelephonyVoiceWebhook', 'ConversationRelay']) {
      expect(catalog.some((s) => s.id === id)).toBe(true);
    }
  });

  test("execute-api:ManageConnections only for manageConnections, on this API's live connections only", () => {
    const managers = catalog.filter((s) => s.access.manageConnections);
    // The relay itself, and the AMD webhook (a machine: it sends the session's `end`).
    expect(managers.map((s) => s.id)).toEqual(['ConversationRelay', 'TelephonyAmdWebhook']);
    for (const spec of catalog) {
      const statements = manageStatements(functionId(resources, spec));
      if (!spec.access.manageConnections) {
        expect({ id: spec.id, statements }).toEqual({ id: spec.id, statements: [] });
        continue;
      }
      expect(statements).toHaveLength(1);
      expect(asArray(statements[0].Action)).toEqual(['execute-api:ManageConnections']);
      expect(asArray(statements[0].Resource).map(flat)).toEqual([
        `arn:<AWS::Partition>:execute-api:${REGION}:123456789012:<${apiId}>/live/*/@connections/*`,
      ]);
    }
  });

  test('Bedrock only for languageModel functions, on the configured model only, with LLM_PROVIDER and LLM_MODEL', () => {
    const conversing = catalog.filter((s) => s.access.languageModel).map((s) => s.id);
    expect(conversing.sort()).toEqual(['ConversationRelay', 'ProcessCallEnded', 'RunEvaluationScenario']);
    for (const spec of catalog) {
      const fnId = functionId(resources, spec);
      const statements = bedrockStatements(resources, fnId);
      const env = environmentOf(resources, fnId);
      if (!spec.access.languageModel) {
        expect({ id: spec.id, statements, provider: env.LLM_PROVIDER }).toEqual({
          id: spec.id,
          statements: [],
        });
        continue;
      }
      expect(env).toMatchObject({ LLM_PROVIDER: 'bedrock', LLM_MODEL: DEFAULT_BEDROCK_MODEL });
      expect(statements).toHaveLength(1);
      expect(asArray(statements[0].Action).sort()).toEqual([
        'bedrock:InvokeModel',
        'bedrock:InvokeModelWithResponseStream',
      ]);
      expect(asArray(statements[0].Resource).map(flat)).toEqual([
        `arn:<AWS::Partition>:bedrock:<AWS::Region>::foundation-model/${DEFAULT_BEDROCK_MODEL}`,
      ]);
    }
  });

  test('a cross-region inference profile: the profile, and its model in any region only through that profile', () => {
    const model = 'eu.amazon.nova-lite-v1:0';
    const own = synth(catalog, { languageModel: { provider: 'bedrock', model } }).resources;
    const fnId = functionId(own, relaySpecs[0]);
    expect(environmentOf(own, fnId)).toMatchObject({ LLM_PROVIDER: 'bedrock', LLM_MODEL: model });
    const statements = bedrockStatements(own, fnId);
    const profileArn = `arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:inference-profile/${model}`;
    expect(
      statements.map((s) => ({
        resources: asArray(s.Resource).map(flat),
        condition: s.Condition && flat(s.Condition.StringEquals['bedrock:InferenceProfileArn']),
      })),
    ).toEqual([
      { resources: [profileArn], condition: undefined },
      {
        resources: ['arn:<AWS::Partition>:bedrock:*::foundation-model/amazon.nova-lite-v1:0'],
        condition: profileArn,
      },
    ]);
  });

  test('an OpenAI-compatible server: LLM_BASE_URL set, no Bedrock grant', () => {
    const settings = {
      provider: 'openai' as const,
      model: 'llama3.1',
      baseUrl: 'https://llm.example.com/v1',
    };
    const own = synth(catalog, { languageModel: settings }).resources;
    const fnId = functionId(own, relaySpecs[0]);
    expect(environmentOf(own, fnId)).toMatchObject({
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'llama3.1',
      LLM_BASE_URL: 'https://llm.example.com/v1',
    });
    expect(bedrockStatements(own, fnId)).toEqual([]);
  });

  test('a model ARN is refused at synth', () => {
    expect(() =>
      newStack(catalog, {
        languageModel: { provider: 'bedrock', model: 'arn:aws:bedrock:us-east-1:1:provisioned-model/x' },
      }),
    ).toThrow(/not an ARN/);
  });

  test('the stack outputs the relay URL and the model', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(flat(outputs.VoiceRelayUrl.Value)).toBe(
      `wss://<${apiId}>.execute-api.${REGION}.<AWS::URLSuffix>/live`,
    );
    expect(outputs.LanguageModel.Value).toBe(`bedrock:${DEFAULT_BEDROCK_MODEL}`);
  });

  test('piiDetector comprehend: the conversing functions get PII_DETECTOR and DetectPiiEntities; cdk-nag clean', () => {
    const own = synth(catalog, { piiDetector: 'comprehend' }).resources;
    const fnId = functionId(own, relaySpecs[0]);
    expect(environmentOf(own, fnId)).toMatchObject({ PII_DETECTOR: 'comprehend' });
    const comprehend = grantedStatements(own, fnId).filter((s) =>
      asArray(s.Action).includes('comprehend:DetectPiiEntities'),
    );
    expect(comprehend.map((s) => ({ action: s.Action, resource: s.Resource }))).toEqual([
      { action: 'comprehend:DetectPiiEntities', resource: '*' },
    ]);
    const plain = synth(catalog).resources;
    expect(environmentOf(plain, functionId(plain, relaySpecs[0])).PII_DETECTOR).toBeUndefined();
    const stack = newStack(catalog, { piiDetector: 'comprehend' });
    Aspects.of(stack).add(new AwsSolutionsChecks());
    const annotations = Annotations.fromStack(stack);
    expect(annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*')).map((f) => f.id)).toEqual(
      [],
    );
  });

  test('cdk-nag stays clean with a cross-region inference profile', () => {
    const stack = newStack(catalog, {
      languageModel: { provider: 'bedrock', model: 'us.amazon.nova-lite-v1:0' },
    });
    Aspects.of(stack).add(new AwsSolutionsChecks());
    const annotations = Annotations.fromStack(stack);
    expect(annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*')).map((f) => f.id)).toEqual(
      [],
    );
  });
});

describe('catalog mistakes fail the synth', () => {
  const base = { entry: ENTRY, group: 'calling' as const, access: {} };

  test('a queue consumer whose timeout is over 1/6 of the visibility timeout', () => {
    expect(() =>
      newStack([{ ...base, id: 'Slow', queue: { name: 'calls', batchSize: 1 }, timeoutSeconds: 31 }]),
    ).toThrow(/6x/);
  });

  test('two consumers of one queue', () => {
    expect(() =>
      newStack([
        { ...base, id: 'A', queue: { name: 'calls', batchSize: 1 } },
        { ...base, id: 'B', queue: { name: 'calls', batchSize: 1 } },
      ]),
    ).toThrow(/two consumers/);
  });

  test('two functions for one WebSocket route', () => {
    expect(() =>
      newStack([
        { ...base, id: 'A', webSocket: { routes: ['$connect', '$default'] } },
        { ...base, id: 'B', webSocket: { routes: ['$default'] } },
      ]),
    ).toThrow(/\$default is served by two functions/);
  });

  test('a duplicate id', () => {
    expect(() =>
      newStack([
        { ...base, id: 'A' },
        { ...base, id: 'A' },
      ]),
    ).toThrow(/duplicate/);
  });
});

describe.each([
  ['the catalog', catalog],
  ['the fixture catalog', fixture],
])('cdk-nag AwsSolutions on the stack from %s', (_name, specs) => {
  const stack = newStack(specs);
  Aspects.of(stack).add(new AwsSolutionsChecks());
  const annotations = Annotations.fromStack(stack);
  const describeFindings = (found: { id: string; entry: { data?: unknown } }[]) =>
    found.map((f) => `${f.id}: ${String(f.entry.data).split('\n')[0]}`);

  test('no unsuppressed errors', () => {
    expect(describeFindings(annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*')))).toEqual(
      [],
    );
  });

  test('no unsuppressed warnings', () => {
    expect(describeFindings(annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')))).toEqual(
      [],
    );
  });

  test('every suppression carries a written reason', () => {
    const resources = Template.fromStack(stack).toJSON().Resources as Resources;
    const suppressions = Object.values(resources).flatMap(
      (r) => r.Metadata?.cdk_nag?.rules_to_suppress ?? [],
    );
    expect(suppressions.length).toBeGreaterThan(0);
    for (const { id, reason } of suppressions) {
      expect(id).toMatch(/^AwsSolutions-/);
      expect(reason.length).toBeGreaterThan(80);
      expect(reason).not.toMatch(/\b(TODO|FIXME|TBD)\b/);
    }
  });
});

describe('stacks with room', () => {
  /** Resource count of the root template and of each domain's nested template. */
  function templateSizes(specs: FunctionSpec[]): Record<string, number> {
    const { stack, template } = synth(specs);
    const sizes: Record<string, number> = {
      root: Object.keys(template.toJSON().Resources as Resources).length,
    };
    for (const [group, domain] of stack.domainStacks) {
      sizes[group] = Object.keys(Template.fromStack(domain).toJSON().Resources as Resources).length;
    }
    return sizes;
  }

  test('no template of the real catalog holds more than 250 resources', () => {
    const sizes = templateSizes(catalog);
    expect(Object.keys(sizes).length).toBeGreaterThan(2);
    for (const [name, size] of Object.entries(sizes))
      expect({ name, size: Math.min(size, 251) }).toEqual({ name, size: Math.min(size, 250) });
  });

  test('a domain of 100 routes still fits in its own template (room for the families to come)', () => {
    const http = Array.from({ length: 100 }, (_, i) => ({
      method: 'GET' as const,
      path: `/api/v1/workspaces/{workspace_id}/things${i}`,
      summary: `thing ${i}`,
      auth: 'user_or_api_key' as const,
      access: { table: 'readwrite' as const },
    }));
    const big: FunctionSpec = {
      id: 'BigApi',
      entry: ENTRY,
      group: 'agents',
      http,
      access: { table: 'readwrite' },
    };
    const sizes = templateSizes([...catalog, big]);
    expect(sizes.agents).toBeLessThanOrEqual(250);
    expect(sizes.root).toBeLessThanOrEqual(250);
  });
});
