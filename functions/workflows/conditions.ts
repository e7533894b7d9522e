import { boundedInput } from '../platform/bounded-input.js';
import type { Condition } from './schemas.js';

/**
 * The Signal stage's conditions, read against what the run knows: the event's data and the contact.
 * A field is a dotted path: `contact.<path>` reads the contact (its API view, plus `last_call`),
 * `event.<path>` or a bare path reads the event's data (`sentiment`, `listing.suburb`, `hot`).
 * All conditions must hold (an empty list always does).
 *
 *   eq / neq   equal (strings compared ignoring case and surrounding spaces; numbers and booleans
 *              also match their text: `"3"` eq 3); a missing field is not equal to anything
 *   contains   a string contains the text (ignoring case), or a list has an element equal to it
 *   gt / lt    both sides are numbers (or numeric text); otherwise false
 */
export interface SignalFacts {
  event: Record<string, unknown>;
  contact?: Record<string, unknown>;
}

export interface ConditionResult {
  field: string;
  op: Condition['op'];
  value: Condition['value'];
  actual: unknown;
  passed: boolean;
}

export function lookup(facts: SignalFacts, field: string): unknown {
  const parts = field.split('.').filter((part) => part.length > 0);
  let root: unknown = facts.event;
  if (parts[0] === 'contact') {
    root = facts.contact;
    parts.shift();
  } else if (parts[0] === 'event' && !(parts.length > 1 && 'event' in facts.event)) {
    parts.shift();
  }
  let current: unknown = root;
  for (const part of parts) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value).trim().toLowerCase()
    : undefined;

const numeric = (value: unknown): number | undefined => {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  return undefined;
};

function equal(actual: unknown, expected: Condition['value']): boolean {
  const a = text(actual);
  return a !== undefined && a === text(expected);
}

export function evaluate(condition: Condition, facts: SignalFacts): ConditionResult {
  const actual = lookup(facts, condition.field);
  const { op, value } = condition;
  let passed: boolean;
  switch (op) {
    case 'eq':
      passed = equal(actual, value);
      break;
    case 'neq':
      passed = actual !== undefined && actual !== null && !equal(actual, value);
      break;
    case 'contains':
      passed = Array.isArray(actual)
        ? actual.some((item) => equal(item, value))
        : typeof actual === 'string' && actual.toLowerCase().includes(String(value).toLowerCase());
      break;
    case 'gt':
    case 'lt': {
      const a = numeric(actual);
      const b = numeric(value);
      passed = a !== undefined && b !== undefined && (op === 'gt' ? a > b : a < b);
      break;
    }
  }
  return { field: condition.field, op, value, actual: boundedInput(actual ?? null), passed };
}

export function evaluateAll(
  conditions: Condition[],
  facts: SignalFacts,
): { matched: boolean; conditions: ConditionResult[] } {
  const results = conditions.map((condition) => evaluate(condition, facts));
  return { matched: results.every((result) => result.passed), conditions: results };
}

/** Fills `{{path}}` placeholders of a task's text from the same facts (a missing field is empty). */
export function render(template: string, facts: SignalFacts): string {
  return template.replace(/\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g, (_match, path: string) => {
    const value = lookup(facts, path);
    return value === undefined || value === null
      ? ''
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
  });
}
