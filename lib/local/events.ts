import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { APIGatewayProxyEventV2, EventBridgeEvent, SQSRecord } from 'aws-lambda';
import type { Message } from '@aws-sdk/client-sqs';
import type { RouteTarget } from './router.js';

const ACCOUNT_ID = '000000000000';

/** Content types API Gateway passes as text; any other body arrives base64-encoded. */
export function isTextContent(contentType: string | undefined): boolean {
  if (!contentType) return true;
  const type = contentType.split(';')[0].trim().toLowerCase();
  return (
    type.startsWith('text/') ||
    type === 'application/json' ||
    type.endsWith('+json') ||
    type === 'application/x-www-form-urlencoded' ||
    type === 'application/xml' ||
    type.endsWith('+xml') ||
    type === 'application/javascript' ||
    type === 'application/graphql'
  );
}

/** `12/Mar/2020:19:03:58 +0000`, the format of requestContext.time. */
function clfTime(date: Date): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${months[date.getUTCMonth()]}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(
    date.getUTCMinutes(),
  )}:${pad(date.getUTCSeconds())} +0000`;
}

function decodeQueryPart(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

/** API Gateway v2 joins repeated query parameters with commas. */
export function queryParameters(rawQueryString: string): Record<string, string> | undefined {
  if (!rawQueryString) return undefined;
  const out: Record<string, string> = {};
  for (const part of rawQueryString.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = decodeQueryPart(eq === -1 ? part : part.slice(0, eq));
    const value = eq === -1 ? '' : decodeQueryPart(part.slice(eq + 1));
    out[name] = name in out ? `${out[name]},${value}` : value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export interface IncomingRequest {
  method: string;
  /** The request target as received: path plus optional `?query`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  sourceIp: string;
  requestId?: string;
  now?: Date;
}

/** An API Gateway HTTP API (payload 2.0) event, as API Gateway or a function URL builds it. */
export function httpApiEvent(
  request: IncomingRequest,
  target: RouteTarget,
  pathParameters: Record<string, string>,
): APIGatewayProxyEventV2 {
  const now = request.now ?? new Date();
  const queryAt = request.url.indexOf('?');
  const rawPath = queryAt === -1 ? request.url : request.url.slice(0, queryAt);
  const rawQueryString = queryAt === -1 ? '' : request.url.slice(queryAt + 1);

  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (lower === 'cookie') {
      const all = Array.isArray(value) ? value.join('; ') : value;
      cookies = all
        .split(';')
        .map((c) => c.trim())
        .filter(Boolean);
      continue;
    }
    headers[lower] = Array.isArray(value) ? value.join(',') : value;
  }
  const host = headers.host ?? '127.0.0.1';
  headers['x-forwarded-for'] ??= request.sourceIp;
  headers['x-forwarded-proto'] ??= 'http';

  const hasBody = request.body.length > 0;
  const text = isTextContent(headers['content-type']);
  const asText = text && isUtf8(request.body);
  const method = request.method.toUpperCase();
  const requestId = request.requestId ?? randomUUID();
  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: target.routeKey,
    rawPath,
    rawQueryString,
    ...(cookies ? { cookies } : {}),
    headers,
    ...(rawQueryString ? { queryStringParameters: queryParameters(rawQueryString) } : {}),
    ...(target.kind === 'route' && Object.keys(pathParameters).length > 0 ? { pathParameters } : {}),
    requestContext: {
      accountId: target.kind === 'route' ? ACCOUNT_ID : 'anonymous',
      apiId: 'local',
      domainName: host,
      domainPrefix: host.split('.')[0],
      http: {
        method,
        path: rawPath,
        protocol: 'HTTP/1.1',
        sourceIp: request.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: target.routeKey,
      stage: '$default',
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    // A text body that is not valid UTF-8 is handed over base64-encoded, its bytes intact: decoded to a
    // string it would carry replacement characters where the bad bytes were, and the kernel could not
    // tell (functions/platform/http/json-body.ts refuses it).
    ...(hasBody ? { body: asText ? request.body.toString('utf8') : request.body.toString('base64') } : {}),
    isBase64Encoded: hasBody && !asText,
  };
  return event;
}

/** An SQS event as Lambda's event source mapping delivers it. */
export function sqsEvent(messages: Message[], queueArn: string, region: string): { Records: SQSRecord[] } {
  return {
    Records: messages.map((message) => {
      const attributes = (message.Attributes ?? {}) as Record<string, string>;
      const messageAttributes: SQSRecord['messageAttributes'] = {};
      for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
        messageAttributes[name] = {
          dataType: value.DataType ?? 'String',
          ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
          ...(value.BinaryValue !== undefined
            ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }
            : {}),
          stringListValues: value.StringListValues ?? [],
          binaryListValues: (value.BinaryListValues ?? []).map((b) => Buffer.from(b).toString('base64')),
        };
      }
      return {
        messageId: message.MessageId ?? randomUUID(),
        receiptHandle: message.ReceiptHandle ?? '',
        body: message.Body ?? '',
        attributes: {
          ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
          SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
          SenderId: attributes.SenderId ?? ACCOUNT_ID,
          ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
          ...(attributes.MessageGroupId ? { MessageGroupId: attributes.MessageGroupId } : {}),
          ...(attributes.MessageDeduplicationId
            ? { MessageDeduplicationId: attributes.MessageDeduplicationId }
            : {}),
          ...(attributes.SequenceNumber ? { SequenceNumber: attributes.SequenceNumber } : {}),
        },
        messageAttributes,
        md5OfBody: message.MD5OfBody ?? '',
        ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
        eventSource: 'aws:sqs',
        eventSourceARN: queueArn,
        awsRegion: region,
      };
    }),
  };
}

/** An EventBridge Scheduler/rule "Scheduled Event". */
export function scheduledEvent(
  functionId: string,
  region: string,
  now = new Date(),
): EventBridgeEvent<'Scheduled Event', Record<string, never>> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: ACCOUNT_ID,
    time: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: [`arn:aws:events:${region}:${ACCOUNT_ID}:rule/${functionId}`],
    detail: {},
  };
}
