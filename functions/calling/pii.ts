import type { Agent } from '../agents/entities.js';
import { countryOf } from '../platform/phone.js';
import type { KnownValue } from '../platform/pii/redactor.js';
import { isPiiCategory, type PiiCategory } from '../platform/pii/categories.js';
import type { Call } from './entities.js';

/**
 * PII redaction of a call: the agent's setting copied onto the call when it is made (a later change of
 * the agent reaches the next call), and what the redactor knows of the call beforehand (its known
 * values: parameters whose name or value says what they are, the other party's number).
 */
export type CallRedaction = NonNullable<Call['piiRedaction']>;

/** The call item's field for an agent's setting (nothing when off). */
export const callPiiRedaction = (agent: Pick<Agent, 'piiRedaction'>): { piiRedaction?: CallRedaction } =>
  agent.piiRedaction?.enabled
    ? {
        piiRedaction: {
          ...(agent.piiRedaction.categories ? { categories: agent.piiRedaction.categories } : {}),
          recordings: agent.piiRedaction.recordings ?? 'keep',
        },
      }
    : {};

/** The categories a call redacts (undefined: all). */
export const redactionCategories = (redaction: CallRedaction): PiiCategory[] | undefined =>
  redaction.categories?.filter(isPiiCategory);

/** A parameter's category by its name; undefined: by its value (the rules), or none. */
function parameterCategory(name: string): PiiCategory | undefined {
  const n = name.toLowerCase();
  // The listing the call is about is the business's, not the caller's.
  if (n.startsWith('listing') || n.startsWith('property') || n === 'price') return undefined;
  if (/e-?mail/.test(n)) return 'email';
  if (/phone|mobile|cell/.test(n)) return 'phone_number';
  if (/birth|dob/.test(n)) return 'date_of_birth';
  if (/address|street/.test(n)) return 'address';
  if (/name/.test(n) && !/agent|company|business|agency|product/.test(n)) return 'person_name';
  if (/card/.test(n)) return 'credit_card';
  if (/account|bsb|iban/.test(n)) return 'bank_account';
  if (/tfn|tax|medicare|ssn|passport|licen[cs]e/.test(n)) return 'government_id';
  return undefined;
}

/** The values the redactor always finds in a call: its parameters (named for a category), the other party's number, its contact's. */
export function callKnownValues(
  call: Pick<Call, 'parameters' | 'direction' | 'fromPhone' | 'toPhone'>,
  contact?: { name?: string; phone?: string; email?: string },
): KnownValue[] {
  const known: KnownValue[] = [];
  for (const [name, value] of Object.entries((call.parameters ?? {}) as Record<string, unknown>)) {
    const category = typeof value === 'string' ? parameterCategory(name) : undefined;
    if (category && value) known.push({ category, value: value as string });
  }
  const other = call.direction === 'inbound' ? call.fromPhone : call.toPhone;
  if (other) known.push({ category: 'phone_number', value: other });
  if (contact?.name) known.push({ category: 'person_name', value: contact.name });
  if (contact?.phone) known.push({ category: 'phone_number', value: contact.phone });
  if (contact?.email) known.push({ category: 'email', value: contact.email });
  return known;
}

/** The regions whose national phone formats the call's people use: its numbers' countries. */
export function callRegions(call: Pick<Call, 'fromPhone' | 'toPhone'>): string[] {
  const regions = [call.toPhone, call.fromPhone]
    .map((phone) => (phone ? countryOf(phone) : undefined))
    .filter((c): c is string => !!c);
  return [...new Set(regions.length ? regions : ['AU', 'US'])];
}
