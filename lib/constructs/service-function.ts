import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { FunctionSpec } from '../catalog-types.js';
import { SERVICE_NAME } from '../../functions/platform/resources.js';

/** Runtime of every function: the newest Node.js line Lambda offers (cdk-nag L1 checks it is the latest). */
export const FUNCTION_RUNTIME = lambda.Runtime.NODEJS_24_X;

export const DEFAULT_MEMORY_MB = 512;

/** Request/response functions (API routes, webhooks) answer fast; queue consumers and jobs get longer. */
export function defaultTimeoutSeconds(spec: FunctionSpec): number {
  return spec.queue || spec.schedule ? 30 : 10;
}

export const functionTimeoutSeconds = (spec: FunctionSpec): number =>
  spec.timeoutSeconds ?? defaultTimeoutSeconds(spec);

/** The description every catalog function carries: how tests and operators find it among CDK helpers. */
export const functionDescription = (spec: FunctionSpec): string => `${SERVICE_NAME}/${spec.id}`;

/** Lets bundled CommonJS dependencies call `require` inside the ESM output. */
export const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'module';const require = createRequire(import.meta.url);";

/**
 * Constants replaced at bundling. ENTITY_MODELS_PREVALIDATED: ElectroDB's check of each entity model
 * (most of a cold load) is skipped in bundles, the models being checked where the source runs
 * unbundled (functions/platform/table.ts).
 */
export const BUNDLE_DEFINE: Record<string, string> = {
  'process.env.ENTITY_MODELS_PREVALIDATED': JSON.stringify('true'),
};

/**
 * Packages replaced at bundling, by a path from the project root. `jsonschema`: ElectroDB's model
 * checker, which the bundles do not run (see the stub).
 */
export const BUNDLE_ALIASES: Record<string, string> = {
  jsonschema: './lib/constructs/bundle-stubs/jsonschema.mjs',
};

/**
 * Copies the package files a function reads at runtime into its asset, beside the bundled handler
 * (`FunctionSpec.bundleFiles`). Paths are resolved from the repository's node_modules at synth time and
 * named relative to the bundling input directory (the project root), or absolute when node_modules
 * lies outside it (a symlink).
 */
export function copyBundleFiles(
  repoRoot: string,
  files: NonNullable<FunctionSpec['bundleFiles']>,
): NonNullable<BundlingOptions['commandHooks']> {
  const root = realpathSync(repoRoot);
  const resolveFrom = createRequire(path.join(root, 'package.json'));
  const sources = files.map((file) => {
    const resolved = realpathSync(resolveFrom.resolve(file.packageFile));
    const relative = path.relative(root, resolved);
    const inside = !relative.startsWith('..') && !path.isAbsolute(relative);
    return { from: inside ? relative.split(path.sep).join('/') : resolved, inside, to: file.assetFile };
  });
  for (const { to } of sources) {
    if (!/^[A-Za-z0-9._-]+$/.test(to)) throw new Error(`bundleFiles: ${to} is not a plain file name`);
  }
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) =>
      sources.map(
        ({ from, inside, to }) => `cp "${inside ? `${inputDir}/${from}` : from}" "${outputDir}/${to}"`,
      ),
  };
}

export interface ServiceFunctionProps {
  spec: FunctionSpec;
  /** Absolute path of the repository root (holds package-lock.json; catalog entries are relative to it). */
  repoRoot: string;
  environment: Record<string, string>;
  logRetention?: logs.RetentionDays;
}

/**
 * One catalog entry as a Lambda function: Node.js on arm64, bundled by the local esbuild into a minified,
 * tree-shaken ESM file with only the AWS SDK clients it imports, its own log group with a retention, and
 * its own role that starts with nothing but writing to that log group (grants are added by the stack).
 */
export class ServiceFunction extends NodejsFunction {
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
      entry: path.join(repoRoot, spec.entry),
      handler: 'handler',
      projectRoot: repoRoot,
      depsLockFilePath: path.join(repoRoot, 'package-lock.json'),
      runtime: FUNCTION_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: spec.memoryMb ?? DEFAULT_MEMORY_MB,
      timeout: Duration.seconds(functionTimeoutSeconds(spec)),
      role,
      logGroup,
      environment: props.environment,
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        mainFields: ['module', 'main'],
        minify: true,
        sourceMap: true,
        banner: ESM_REQUIRE_BANNER,
        define: BUNDLE_DEFINE,
        // Relative to the project root, where esbuild runs (locally and in the bundling image).
        esbuildArgs: Object.fromEntries(
          Object.entries(BUNDLE_ALIASES).map(([name, stub]) => [`--alias:${name}`, stub]),
        ),
        // Bundle everything, AWS SDK v3 included: only the clients a handler imports end up in it.
        externalModules: [],
        ...(spec.bundleFiles?.length ? { commandHooks: copyBundleFiles(repoRoot, spec.bundleFiles) } : {}),
      },
    });
    this.spec = spec;
  }
}
