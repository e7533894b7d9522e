/**
 * Synthesizing the stack for the infra tests (stack.test.ts, operations.test.ts), and reading its
 * templates: the root's and the domains' nested stacks' resources in one map, references followed through
 * the nested stacks' parameters and outputs. Asset bundling is skipped through the app context, so no
 * esbuild run and no Docker.
 */
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { FunctionSpec } from '../../lib/cloud/catalog-types.js';
import { functionDescription } from '../../lib/cloud/constructs/service-function.js';
import { VoiceAgentStack, type VoiceAgentStackProps } from '../../lib/cloud/stack.js';

export const STACK_NAME = 'TestStack';
export const REGION = 'ap-southeast-2';

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
  Metadata?: { cdk_nag?: { rules_to_suppress?: { id: string; reason: string }[] } };
}
export type Resources = Record<string, CfnResource>;
export interface PolicyStatement {
  Effect: string;
  Action: string | string[];
  Resource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

export function newStack(functions?: FunctionSpec[], props: Partial<VoiceAgentStackProps> = {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  return new VoiceAgentStack(app, STACK_NAME, {
    functions,
    env: { account: '123456789012', region: REGION },
    // A stand-in for web/dist: the infra tests do not build the dashboard.
    dashboardAssets: fileURLToPath(new URL('../fixtures/web-dist', import.meta.url)),
    ...props,
  });
}

/**
 * The root template, and every resource of the root and the domains' nested stacks in one map
 * (logical ids are unique across them: each is derived from the construct's full path).
 */
export function synth(functions?: FunctionSpec[], stackProps: Partial<VoiceAgentStackProps> = {}) {
  const stack = newStack(functions, stackProps);
  const template = Template.fromStack(stack);
  const nested = [...stack.domainStacks.values()].map((domain) => Template.fromStack(domain));
  const templates = [template, ...nested];
  const resources = Object.assign(
    {},
    ...templates.map((t) => t.toJSON().Resources as Resources),
  ) as Resources;
  for (const [, nestedStack] of ofType(resources, 'AWS::CloudFormation::Stack')) {
    const parameters = props<{ Parameters?: Record<string, unknown> }>(nestedStack).Parameters ?? {};
    for (const [name, value] of Object.entries(parameters)) nestedParameters.set(name, value);
  }
  for (const domain of nested) {
    const outputs = (domain.toJSON().Outputs ?? {}) as Record<string, { Value: unknown }>;
    for (const [name, output] of Object.entries(outputs)) nestedOutputs.set(name, output.Value);
  }
  return { template, templates, resources, stack };
}

export const ofType = (resources: Resources, type: string): [string, CfnResource][] =>
  Object.entries(resources).filter(([, r]) => r.Type === type);

export const props = <T = Record<string, unknown>>(resource: CfnResource): T =>
  (resource.Properties ?? {}) as T;

export const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/**
 * How a nested stack sees the root's resources and its sibling stacks' outputs: parameter name → the
 * value the root passes (accumulated over every synth of this file; names derive from construct paths).
 */
const nestedParameters = new Map<string, unknown>();
const nestedOutputs = new Map<string, unknown>();

/**
 * A value as the root stack would write it: a nested stack's parameter (`referenceto…`) is replaced by
 * what the root passes in, and a sibling nested stack's output by the output's own value.
 */
export function resolved(value: unknown): unknown {
  for (let depth = 0; depth < 5 && value && typeof value === 'object'; depth += 1) {
    const v = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
    if (v.Ref !== undefined && nestedParameters.has(v.Ref)) {
      value = nestedParameters.get(v.Ref);
    } else if (v['Fn::GetAtt']?.[1]?.startsWith('Outputs.')) {
      value = nestedOutputs.get(v['Fn::GetAtt'][1].slice('Outputs.'.length));
    } else {
      break;
    }
  }
  return value;
}

/** `{ "Fn::GetAtt": [id, attr] }` or `{ Ref: id }` → id (through nested stack parameters). */
export function refId(value: unknown): string | undefined {
  const v = resolved(value);
  if (v && typeof v === 'object') {
    const ref = v as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
    return ref.Ref ?? ref['Fn::GetAtt']?.[0];
  }
  return undefined;
}

/** The logical id of the Lambda function of a catalog entry (found by its description). */
export function functionId(resources: Resources, spec: FunctionSpec): string {
  const found = ofType(resources, 'AWS::Lambda::Function').filter(
    ([, r]) => props(r).Description === functionDescription(spec),
  );
  expect(found).toHaveLength(1);
  return found[0][0];
}

/**
 * A value as one readable string: nested stack parameters and sibling outputs resolved, `Fn::Join`
 * joined, a reference written `<LogicalId>` (or `<LogicalId.Attr>`), a pseudo parameter `<AWS::Region>`.
 */
export function flat(value: unknown): string {
  const v = resolved(value);
  if (typeof v === 'string') return v;
  const o = v as { Ref?: string; 'Fn::GetAtt'?: [string, string]; 'Fn::Join'?: [string, unknown[]] };
  if (o.Ref !== undefined) return `<${o.Ref}>`;
  if (o['Fn::GetAtt']) return `<${o['Fn::GetAtt'].join('.')}>`;
  if (o['Fn::Join']) return o['Fn::Join'][1].map(flat).join(o['Fn::Join'][0]);
  return JSON.stringify(v);
}
