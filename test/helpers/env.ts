import { existsSync, readFileSync } from 'node:fs';

/**
 * Jest setupFiles: copy the running local stack's environment (stack.json `env`, named by
 * LOCAL_STACK_STATE, set by global-setup) into process.env, so integration tests can import handlers
 * and services directly and reach the same DynamoDB, SQS, S3 and identity provider as the gateway.
 * Without LOCAL_STACK_STATE, nothing happens.
 */
const statePath = process.env.LOCAL_STACK_STATE;
if (statePath && existsSync(statePath)) {
  const state = JSON.parse(readFileSync(statePath, 'utf8')) as { env?: Record<string, string> };
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
  Object.assign(process.env, state.env ?? {});
}
