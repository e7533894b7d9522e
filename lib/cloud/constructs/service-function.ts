import { AssetHashType, DockerImage, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { functionTimeoutSeconds, type FunctionSpec } from '../catalog-types.js';
import { SERVICE_NAME } from '../../../functions/platform/resources.js';
import { BUNDLE_ENTRY_FILE, bundleFunction } from './bundle.js';

/** Runtime of every function: the newest Node.js line Lambda offers (cdk-nag L1 checks it is the latest). */
export const FUNCTION_RUNTIME = lambda.Runtime.NODEJS_24_X;

export const DEFAULT_MEMORY_MB = 512;

export { defaultTimeoutSeconds, functionTimeoutSeconds } from '../catalog-types.js';

/** The description every catalog function carries: how tests and operators find it among CDK helpers. */
export const functionDescription = (spec: FunctionSpec): string => `${SERVICE_NAME}/${spec.id}`;

export interface ServiceFunctionProps {
  spec: FunctionSpec;
  /** Absolute path of the repository root (holds package-lock.json; catalog entries are relative to it). */
  repoRoot: string;
  environment: Record<string, string>;
  logRetention?: logs.RetentionDays;
}

/**
 * One catalog entry as a Lambda function: Node.js on arm64, bundled by esbuild (lib/cloud/constructs/bundle.ts:
 * an ESM entry and the chunks it loads on demand), its own log group with a retention, and
 * its own role that starts with nothing but writing to that log group and X-Ray (grants are added by the
 * stack), active X-Ray tracing.
 */
export class ServiceFunction extends lambda.Function {
  readonly spec: FunctionSpec;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    const { spec, repoRoot } = props;
    const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Own role instead of the AWSLambdaBasicExecutionRole managed policy: logs only to its own group.
    const role = new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${functionDescription(spec)}`,
    });
    logGroup.grantWrite(role);

    super(scope, id, {
      description: functionDescription(spec),
      code: bundledCode(repoRoot, spec),
      handler: `${BUNDLE_ENTRY_FILE.replace(/\.mjs$/, '')}.handler`,
      runtime: FUNCTION_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: spec.memoryMb ?? DEFAULT_MEMORY_MB,
      timeout: Duration.seconds(functionTimeoutSeconds(spec)),
      role,
      logGroup,
      environment: props.environment,
      // X-Ray: every invocation is a trace (the log lines carry its xray_trace_id, docs/operations.md).
      tracing: lambda.Tracing.ACTIVE,
    });
    this.spec = spec;
  }
}

/**
 * The function's asset, bundled at synth by the project's esbuild (no Docker: esbuild is a dependency of
 * the project) and hashed by its output, as the CDK's NodejsFunction does. NodejsFunction itself is not
 * used because its esbuild command writes one file and cannot split a bundle into lazily loaded chunks.
 */
function bundledCode(repoRoot: string, spec: FunctionSpec): lambda.Code {
  return lambda.Code.fromAsset(repoRoot, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('esbuild-runs-locally'),
      // Never run (local bundling always succeeds), but part of the asset's cache key: without what
      // differs between functions, the CDK would reuse the first function's bundle for all of them.
      command: ['bundle', spec.entry, ...(spec.bundleFiles ?? []).map((file) => file.packageFile)],
      local: {
        tryBundle(outputDir) {
          bundleFunction(repoRoot, spec, outputDir);
          return true;
        },
      },
    },
  });
}
