/**
 * The values contacts and notes take, apart from the entities: the route declarations (schemas.ts)
 * import these, and the catalog imports the routes, so nothing here may build an ElectroDB entity
 * (an entity takes its table name from the environment when its module is first imported).
 */

/** Stored values (the labels of the product). The API speaks in codes: functions/contacts/views.ts. */
export const CONTACTABILITY = ['Contactable', 'Do Not Contact', 'Unsubscribed'] as const;
export type Contactability = (typeof CONTACTABILITY)[number];

/** Stored values; `Call`: made by the post-call pipeline; `Integration`: named by `integrationName`. */
export const CONTACT_SOURCES = [
  'Manual',
  'CSV',
  'SMS Upload',
  'Phone / Device',
  'VCF Upload',
  'Integration',
  'Call',
] as const;
export type ContactSource = (typeof CONTACT_SOURCES)[number];

export const NOTE_CHANNELS = ['inbound_call', 'outbound_call', 'campaign', 'post_call', 'direct'] as const;
export type NoteChannel = (typeof NOTE_CHANNELS)[number];

/**
 * The one key an attribute is stored under, whatever its header or body spelt: trimmed, lower case,
 * spaces, hyphens and underscores alike (`Suburb`, `suburb` → `suburb`; `Home Suburb`, `home-suburb`
 * → `home_suburb`), at most 64 characters. Import headers (import-parse.ts) and the API's bodies
 * (input.ts, creation.ts, changes.ts) are read through it, so a merge sees one attribute where a
 * file and a form differ.
 */
export const normaliseAttributeKey = (key: string): string =>
  key
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '_')
    .slice(0, 64);

/**
 * Custom attributes as stored: keys normalised (the first non-empty value of keys that normalise
 * alike wins), values trimmed of nothing but kept only when they hold text — an empty or blank value
 * is an absent one, never stored as "".
 */
export function storedAttributes(attributes: Record<string, string> | undefined): Record<string, string> {
  const stored: Record<string, string> = {};
  for (const [key, value] of Object.entries(attributes ?? {})) {
    const name = normaliseAttributeKey(key);
    if (name && typeof value === 'string' && value.trim() && !(name in stored)) stored[name] = value;
  }
  return stored;
}
