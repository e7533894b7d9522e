/**
 * AWS list prices in us-east-1 (US East, N. Virginia), on-demand, without the free tier, as the
 * services' public pricing pages stated them on the date below — written down from those pages as
 * last read, not fetched (this machine has no internet): check them before quoting a figure.
 * `npm run bench`'s cost part (cost.ts) multiplies what a call used by these.
 */
export const PRICES_AS_OF = '2025-06-01';
export const PRICES_SOURCE =
  'aws.amazon.com/<service>/pricing (DynamoDB, Lambda, SQS, S3, API Gateway, Bedrock), us-east-1 list prices';

export interface UnitPrice {
  /** US dollars per `per` units. */
  usd: number;
  per: number;
  unit: string;
}

export const UNIT_PRICES = {
  /** DynamoDB on-demand (the stack's table is PAY_PER_REQUEST), after the November 2024 reduction. */
  dynamodbWriteRequestUnit: { usd: 0.625, per: 1_000_000, unit: 'write request unit' },
  dynamodbReadRequestUnit: { usd: 0.125, per: 1_000_000, unit: 'read request unit' },
  /** Lambda, Arm (every function is ARM_64: lib/cloud/constructs/service-function.ts). */
  lambdaRequest: { usd: 0.2, per: 1_000_000, unit: 'invocation' },
  lambdaGbSecondArm: { usd: 0.0000133334, per: 1, unit: 'GB-second (arm64)' },
  /** SQS standard queue; every 64 KB chunk of a request is a request. */
  sqsRequest: { usd: 0.4, per: 1_000_000, unit: 'request' },
  /** S3 Standard. */
  s3PutRequest: { usd: 0.005, per: 1_000, unit: 'PUT/COPY/POST/LIST request' },
  s3GetRequest: { usd: 0.0004, per: 1_000, unit: 'GET and other request' },
  s3StorageGbMonth: { usd: 0.023, per: 1, unit: 'GB-month stored' },
  /** API Gateway WebSocket (the relay): messages in 32 KB increments, and connection minutes. */
  websocketMessage: { usd: 1.0, per: 1_000_000, unit: 'WebSocket message' },
  websocketConnectionMinute: { usd: 0.25, per: 1_000_000, unit: 'WebSocket connection minute' },
  /** API Gateway HTTP API (the REST-ish API and provider webhooks' routes), first 300 million a month. */
  httpApiRequest: { usd: 1.0, per: 1_000_000, unit: 'HTTP API request' },
  /** Bedrock on-demand, Amazon Nova Lite (DEFAULT_BEDROCK_MODEL, functions/providers/llm/index.ts). */
  novaLiteInputToken: { usd: 0.06, per: 1_000_000, unit: 'input token (Nova Lite)' },
  novaLiteOutputToken: { usd: 0.24, per: 1_000_000, unit: 'output token (Nova Lite)' },
} as const satisfies Record<string, UnitPrice>;

/**
 * What voice-agent platforms charge per minute, for reference: their published list prices as assumed
 * on PRICES_AS_OF (not fetched). Each is their platform's own fee; telephony and, for Vapi, the model,
 * voice and transcription providers come on top.
 */
export const REFERENCE_PER_MINUTE = [
  { name: 'Retell AI', usd: 0.07, what: 'voice engine per minute, before the LLM and telephony' },
  { name: 'Vapi', usd: 0.05, what: 'platform fee per minute, before model, voice, transcription, telephony' },
] as const;

export const price = (p: UnitPrice, units: number): number => (units * p.usd) / p.per;
