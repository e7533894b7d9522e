import { Entity, Service } from 'electrodb';
import { entityConfig } from '../platform/table.js';
import { primaryIndex } from '../platform/keys.js';

/**
 * Contacts of a workspace. Access patterns (key → use):
 *   contact            pk WS#<ws>   sk CONTACT#<ct>                 (by id; list of a workspace)
 *   phone key          pk WS#<ws>   sk CONTACTPHONE#<e164>          (contact by phone; at most one)
 *   email key          pk WS#<ws>   sk CONTACTEMAIL#<lower email>   (contact by email; at most one)
 *   call link          pk WS#<ws>   sk CONTACTCALL#<ct>#<call>      (a call counted once per contact)
 * A contact and its phone/email keys are written in one transaction whose key writes carry
 * "does not exist" conditions, so two contacts never share a phone number or an email address.
 */
const cfg = entityConfig();

export const CONTACTABILITY = ['Contactable', 'Do Not Contact', 'Unsubscribed'] as const;
export const CONTACT_SOURCES = [
  'Manual',
  'CSV',
  'SMS Upload',
  'Phone / Device',
  'VCF Upload',
  'Call',
] as const;
export type ContactSource = (typeof CONTACT_SOURCES)[number];

export const ContactEntity = new Entity(
  {
    model: { entity: 'contact', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
      name: { type: 'string' },
      /** E.164. A contact may have an email only. */
      phone: { type: 'string' },
      /** Lower-cased. */
      email: { type: 'string' },
      /** A source label of spec 2.4, or `Call` for a contact the post-call pipeline created. */
      source: { type: 'string', required: true },
      contactability: { type: CONTACTABILITY, required: true, default: 'Contactable' },
      /** Facts gathered by profile enrichment (intent, budget, listings of interest, …). */
      profile: { type: 'any' },
      profileUpdatedAt: { type: 'string' },
      callCount: { type: 'number', required: true, default: 0 },
      lastCallId: { type: 'string' },
      lastCallAt: { type: 'string' },
      lastCallSentiment: { type: 'string' },
      lastCallSummary: { type: 'string' },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string' },
    },
    indexes: {
      byId: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['contactId'], 'CONTACT#${contactId}'),
    },
  },
  cfg,
);

export const ContactPhoneEntity = new Entity(
  {
    model: { entity: 'contactPhone', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      phone: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
    },
    indexes: {
      byPhone: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['phone'], 'CONTACTPHONE#${phone}'),
    },
  },
  cfg,
);

export const ContactEmailEntity = new Entity(
  {
    model: { entity: 'contactEmail', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      email: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
    },
    indexes: {
      byEmail: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['email'], 'CONTACTEMAIL#${email}'),
    },
  },
  cfg,
);

export const ContactCallEntity = new Entity(
  {
    model: { entity: 'contactCall', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
      callId: { type: 'string', required: true },
      at: { type: 'string', required: true },
    },
    indexes: {
      byContact: primaryIndex(
        ['workspaceId'],
        'WS#${workspaceId}',
        ['contactId', 'callId'],
        'CONTACTCALL#${contactId}#${callId}',
      ),
    },
  },
  cfg,
);

export const contactsService = new Service(
  {
    contact: ContactEntity,
    contactPhone: ContactPhoneEntity,
    contactEmail: ContactEmailEntity,
    contactCall: ContactCallEntity,
  },
  cfg,
);

export const readContact = (workspaceId: string, contactId: string) =>
  ContactEntity.get({ workspaceId, contactId }).go({ consistent: true });
export type Contact = NonNullable<Awaited<ReturnType<typeof readContact>>['data']>;
