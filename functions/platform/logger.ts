import { AsyncLocalStorage } from 'node:async_hooks';
import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { randomUUID } from 'node:crypto';
import { SERVICE_NAME } from './resources.js';

/**
 * Structured JSON logs, one logger per container; the level comes from POWERTOOLS_LOG_LEVEL.
 *
 * Logs never carry personal data: every line goes through `redact` (the formatter below), whatever
 * the caller passed. A value under a key that names personal data (phone, email, name, body,
 * transcript, …) is replaced whole; in any other text, e-mail addresses and phone numbers are masked.
 * So a line keeps what an operator needs (ids, types, statuses, counts, outcomes, error kinds) and
 * a queue message or an error can be logged as it is.
 *
 * Locally (`npm start`, STAGE=local) each event is one short line (`12:03:04 INFO  queue message
 * handled  queue=postCall callId=call_…`) instead of a JSON object, so the terminal stays readable;
 * LOCAL_LOG_FORMAT=json keeps the cloud's JSON.
 */
export const REDACTED = '[redacted]';

/**
 * The keys every line of one invocation carries (an HTTP request's `request_id` and `route`, a queue
 * message's id, a scheduled run's id), held per invocation in AsyncLocalStorage, not appended to the
 * shared logger: locally every handler runs concurrently in one process with this one logger, and
 * keys appended to it would be read by whichever handler logs next.
 */
const invocationKeys = new AsyncLocalStorage<Record<string, unknown>>();

/** Runs `work` (one invocation, or one record of a batch) with exactly these keys on its log lines. */
export function runWithLogKeys<T>(keys: Record<string, unknown>, work: () => T): T {
  return invocationKeys.run({ ...keys }, work);
}

/** The running invocation's keys (empty outside one). */
export const currentLogKeys = (): Readonly<Record<string, unknown>> => invocationKeys.getStore() ?? {};

/** A scheduled handler: each run's lines carry its `run_id` (the EventBridge event's id). */
export function scheduledRun<R>(work: () => Promise<R>): (event?: { id?: string }) => Promise<R> {
  return (event) => runWithLogKeys({ run_id: event?.id ?? randomUUID() }, work);
}

/** Keys whose values are personal data (compared lower-case, without `_` or `-`). */
const PERSONAL_KEYS = new Set([
  'phone',
  'phones',
  'phonenumber',
  'tophone',
  'fromphone',
  'callerphone',
  'to',
  'from',
  'email',
  'emails',
  'toemail',
  'recipient',
  'recipients',
  'hotreplyalertrecipients',
  'name',
  'firstname',
  'lastname',
  'fullname',
  'callername',
  'contactname',
  'displayname',
  'body',
  'text',
  'html',
  'subject',
  'transcript',
  'turns',
  'summary',
  'note',
  'notes',
  'says',
  'say',
  'reply',
  'replies',
  'address',
  'parameters',
  'attributes',
  'content',
  'password',
]);

const normaliseKey = (key: string) => key.replace(/[_-]/g, '').toLowerCase();
export const isPersonalKey = (key: string): boolean => PERSONAL_KEYS.has(normaliseKey(key));

const EMAIL = /[^\s@<>()"',;:]+@[^\s@<>()"',;:]+\.[A-Za-z]{2,}/g;
/** E.164 and national forms with at least 8 digits: `+61491570156`, `+61 491 570 156`, `0491 570 156`. */
const PHONE = /(?<![\w/#:.-])\+?\d[\d ()-]{6,}\d(?![\w/#-])/g;

/** Text with e-mail addresses and phone numbers masked. */
export function scrubText(text: string): string {
  return text.replace(EMAIL, '[email]').replace(PHONE, (match) => {
    const digits = match.replace(/\D/g, '');
    // Timestamps (2026-11-26), long ids and counts are not phone numbers: 8–15 digits and a `+` or a 0.
    return digits.length >= 8 && digits.length <= 15 && /^[+0]/.test(match.trim()) ? '[phone]' : match;
  });
}

/** A log attribute with personal data taken out (see the module's comment). */
export function redact(value: unknown, key?: string, depth = 0): unknown {
  if (value === null || value === undefined) return value;
  if (key !== undefined && isPersonalKey(key)) return REDACTED;
  if (typeof value === 'string') return scrubText(value);
  if (typeof value !== 'object') return value;
  if (depth > 8) return '[…]';
  if (value instanceof Error) {
    return {
      name: value.name,
      message: scrubText(value.message),
      stack: value.stack && scrubText(value.stack),
    };
  }
  if (Array.isArray(value)) return value.map((item) => redact(item, undefined, depth + 1));
  // An error as Powertools formats it ({ name, message, stack, … }): its `name` is the error's kind.
  const errorLike = 'stack' in value && 'message' in value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[k] = errorLike && k === 'name' && typeof v === 'string' ? v : redact(v, k, depth + 1);
  return out;
}

/** Powertools' JSON lines (its standard keys, in its order), redacted. */
export class RedactingLogFormatter extends LogFormatter {
  override formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const base = {
      level: attributes.logLevel,
      message: scrubText(attributes.message),
      timestamp: this.formatTimestamp(attributes.timestamp),
      service: attributes.serviceName,
      cold_start: attributes.lambdaContext?.coldStart,
      function_arn: attributes.lambdaContext?.invokedFunctionArn,
      function_memory_size: attributes.lambdaContext?.memoryLimitInMB,
      function_name: attributes.lambdaContext?.functionName,
      function_request_id: attributes.lambdaContext?.awsRequestId,
      sampling_rate: attributes.sampleRateValue,
      xray_trace_id: attributes.xRayTraceId,
    };
    // The invocation's keys first; a line's own key of the same name wins.
    const keyed = { ...currentLogKeys(), ...additional };
    return new LogItem({ attributes: base }).addAttributes(redact(keyed) as LogAttributes);
  }
}

const BASE_KEYS = new Set([
  'level',
  'message',
  'timestamp',
  'service',
  'cold_start',
  'function_arn',
  'function_memory_size',
  'function_name',
  'function_request_id',
  'sampling_rate',
  'xray_trace_id',
  'tenant_id',
]);
const MAX_VALUE = 80;

const short = (value: unknown): string => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
};

/**
 * One short line for a (redacted) log item: time, level, message, then its scalar fields and the ids
 * inside its objects as `key=value` (an error as its message; at ERROR, its stack on the next lines).
 */
export function terminalLine(item: LogAttributes): string {
  const time = typeof item.timestamp === 'string' ? item.timestamp.slice(11, 19) : '';
  const level = String(item.level ?? '').padEnd(5);
  const fields: string[] = [];
  let stack: string | undefined;
  const add = (key: string, value: unknown, depth: number) => {
    if (value === undefined || value === null || value === '') return;
    if (typeof value !== 'object') {
      fields.push(`${key}=${short(value)}`);
      return;
    }
    const record = value as Record<string, unknown>;
    if (typeof record.message === 'string' && typeof record.name === 'string') {
      fields.push(`${key}=${short(`${record.name}: ${record.message}`)}`);
      if (item.level === 'ERROR' || item.level === 'CRITICAL') stack = record.stack as string | undefined;
      return;
    }
    if (Array.isArray(value) || depth > 1) return;
    for (const [k, v] of Object.entries(record))
      if (/(^|_)id$|Id$|^type$|^kind$|^status$/.test(k)) add(k, v, depth + 1);
  };
  for (const [key, value] of Object.entries(item)) if (!BASE_KEYS.has(key)) add(key, value, 0);
  const line = `${time} ${level} ${String(item.message ?? '')}${fields.length ? `  ${fields.join(' ')}` : ''}`;
  return stack ? `${line}\n${stack.split('\n').slice(1).join('\n')}` : line;
}

const WARN_LEVEL = 16;
/** Read per line: the local stack puts STAGE in the environment after some modules are loaded. */
const onTerminal = () => process.env.STAGE === 'local' && process.env.LOCAL_LOG_FORMAT !== 'json';

/** The service's logger: redacted JSON lines, or locally the same items one short line each. */
class ServiceLogger extends Logger {
  protected override printLog(logLevel: number, log: LogItem): void {
    if (!onTerminal()) return super.printLog(logLevel, log);
    const line = `${terminalLine(log.getAttributes())}\n`;
    (logLevel >= WARN_LEVEL ? process.stderr : process.stdout).write(line);
  }
}

export const logger: Logger = new ServiceLogger({
  serviceName: SERVICE_NAME,
  logFormatter: new RedactingLogFormatter(),
});
