import type { Contact, ContactNote, Suppression } from './entities.js';
import type { Contactability, ContactSource, NoteChannel } from './model.js';

/**
 * Wire shapes (snake_case) of contacts, notes and suppressed numbers, and the codes the API speaks
 * for the labels the records store (`Do Not Contact` is stored, `do_not_contact` is sent).
 */

export const CONTACTABILITY_CODES = ['contactable', 'do_not_contact', 'unsubscribed'] as const;
export type ContactabilityCode = (typeof CONTACTABILITY_CODES)[number];

const CONTACTABILITY_BY_CODE: Record<ContactabilityCode, Contactability> = {
  contactable: 'Contactable',
  do_not_contact: 'Do Not Contact',
  unsubscribed: 'Unsubscribed',
};

/**
 * The sources a caller may give (`integration` with the integration's name as `source_label`), and
 * `call`: a contact the post-call pipeline made from a call (source label `Call`), which callers
 * cannot claim but can filter on.
 */
export const INPUT_SOURCE_CODES = ['manual', 'csv', 'sms_upload', 'device', 'vcf', 'integration'] as const;
export const SOURCE_CODES = [...INPUT_SOURCE_CODES, 'call'] as const;
export type SourceCode = (typeof SOURCE_CODES)[number];
export type InputSourceCode = (typeof INPUT_SOURCE_CODES)[number];

const SOURCE_BY_CODE: Record<SourceCode, ContactSource> = {
  manual: 'Manual',
  csv: 'CSV',
  sms_upload: 'SMS Upload',
  device: 'Phone / Device',
  vcf: 'VCF Upload',
  integration: 'Integration',
  call: 'Call',
};

export const NOTE_CHANNEL_LABELS: Record<NoteChannel, string> = {
  inbound_call: 'Inbound call',
  outbound_call: 'Outbound call',
  campaign: 'Campaign',
  post_call: 'Post-call',
  direct: 'Direct',
};

export const contactabilityLabel = (code: ContactabilityCode): Contactability => CONTACTABILITY_BY_CODE[code];
export const sourceLabel = (code: SourceCode): ContactSource => SOURCE_BY_CODE[code];

export function contactabilityCode(stored: string): ContactabilityCode {
  const found = (Object.keys(CONTACTABILITY_BY_CODE) as ContactabilityCode[]).find(
    (code) => CONTACTABILITY_BY_CODE[code] === stored,
  );
  return found ?? 'contactable';
}

export function sourceCode(stored: string): SourceCode {
  const found = (Object.keys(SOURCE_BY_CODE) as SourceCode[]).find((code) => SOURCE_BY_CODE[code] === stored);
  return found ?? 'manual';
}

/** What a contact list shows: the contact record, or one of its search entries (the same fields). */
export interface ListedContact {
  contactId: string;
  firstName?: string;
  lastName?: string;
  name?: string;
  phone?: string;
  email?: string;
  source: string;
  integrationName?: string;
  contactability: string;
  tags?: string[];
  customAttributes?: unknown;
  timezone?: string;
  lastContactedAt?: string;
  /** Contacts written before `lastContactedAt` existed have only this. */
  lastCallAt?: string;
  createdAt: string;
  updatedAt?: string;
}

/**
 * First and last name; a contact made before they existed has only a full name, read as its first
 * word and the rest.
 */
export function namesOf(contact: Pick<ListedContact, 'firstName' | 'lastName' | 'name'>): {
  firstName: string;
  lastName: string;
} {
  if (contact.firstName !== undefined || contact.lastName !== undefined) {
    return { firstName: contact.firstName ?? '', lastName: contact.lastName ?? '' };
  }
  const full = (contact.name ?? '').trim();
  if (!full) return { firstName: '', lastName: '' };
  const [first, ...rest] = full.split(/\s+/);
  return { firstName: first, lastName: rest.join(' ') };
}

/** A string-to-string map (anything else a record may hold is left out). */
export function attributesOf(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

export function contactView(contact: ListedContact) {
  const { firstName, lastName } = namesOf(contact);
  const source = sourceCode(contact.source);
  return {
    id: contact.contactId,
    first_name: firstName,
    last_name: lastName,
    phone: contact.phone ?? null,
    email: contact.email ?? null,
    contactability: contactabilityCode(contact.contactability),
    source,
    source_label:
      source === 'integration' && contact.integrationName ? contact.integrationName : sourceLabel(source),
    tags: contact.tags ?? [],
    attributes: attributesOf(contact.customAttributes),
    timezone: contact.timezone ?? null,
    last_contacted_at: contact.lastContactedAt ?? contact.lastCallAt ?? null,
    created_at: contact.createdAt,
    updated_at: contact.updatedAt ?? contact.createdAt,
  };
}
export type ContactView = ReturnType<typeof contactView>;

export function noteView(note: ContactNote) {
  return {
    id: note.noteId,
    text: note.text,
    channel: note.channel,
    channel_label: NOTE_CHANNEL_LABELS[note.channel],
    author_id: note.authorId,
    call_id: note.callId ?? null,
    created_at: note.createdAt,
    updated_at: note.updatedAt ?? note.createdAt,
  };
}

export function suppressionView(entry: Suppression) {
  return {
    phone: entry.phone,
    reason: entry.reason ? entry.reason : null,
    created_at: entry.createdAt,
  };
}

/** The wire shape used inside post-call records and payloads. */
export function contactSummary(contact: Contact) {
  return {
    contact_id: contact.contactId,
    name: contact.name ?? null,
    phone: contact.phone ?? null,
    email: contact.email ?? null,
  };
}
