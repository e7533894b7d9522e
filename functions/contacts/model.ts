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
