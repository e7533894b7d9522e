/** The stack's outputs: what an operator or a client needs after a deploy (function URLs: domain-functions.ts). */
import { CfnOutput } from 'aws-cdk-lib';
import type { VoiceAgentStack } from './stack.js';

export function addOutputs(stack: VoiceAgentStack, values: { apiUrl: string; jwtIssuer: string }): void {
  new CfnOutput(stack, 'ApiUrl', { value: values.apiUrl, description: 'Base URL of the HTTP API' });
  new CfnOutput(stack, 'UserPoolId', { value: stack.userPool.userPoolId });
  new CfnOutput(stack, 'UserPoolClientId', { value: stack.userPoolClient.userPoolClientId });
  new CfnOutput(stack, 'JwtIssuer', { value: values.jwtIssuer });
  new CfnOutput(stack, 'DashboardUrl', { value: stack.dashboard.url, description: 'The web console' });
  new CfnOutput(stack, 'TableName', { value: stack.table.tableName });
  new CfnOutput(stack, 'BucketName', { value: stack.bucket.bucketName });
  new CfnOutput(stack, 'VoiceRelayUrl', {
    value: stack.voiceRelay.url,
    description: 'The voice relay (ConversationRelay WebSocket) every answered call is connected to',
  });
  new CfnOutput(stack, 'LanguageModel', {
    value: `${stack.languageModel.provider}:${stack.languageModel.model}`,
    description: 'LLM_PROVIDER:LLM_MODEL of the functions that converse',
  });
}
