import { domainHandler } from '../platform/http/index.js';
import { contactRoutes } from './routes.js';
import { handler as createContact } from './handlers/create-contact.js';
import { handler as listContacts } from './handlers/list-contacts.js';
import { handler as getContact } from './handlers/get-contact.js';
import { handler as updateContact } from './handlers/update-contact.js';
import { handler as deleteContact } from './handlers/delete-contact.js';
import { handler as createContactNote } from './handlers/create-contact-note.js';
import { handler as listContactNotes } from './handlers/list-contact-notes.js';
import { handler as updateContactNote } from './handlers/update-contact-note.js';
import { handler as deleteContactNote } from './handlers/delete-contact-note.js';
import { handler as createContactImport } from './handlers/create-contact-import.js';
import { handler as listContactImports } from './handlers/list-contact-imports.js';
import { handler as getContactImport } from './handlers/get-contact-import.js';
import { handler as startContactImport } from './handlers/start-contact-import.js';
import { handler as listSuppressionList } from './handlers/list-suppression-list.js';
import { handler as putSuppressionEntry } from './handlers/put-suppression-entry.js';
import { handler as deleteSuppressionEntry } from './handlers/delete-suppression-entry.js';

/** The contacts domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(contactRoutes, {
  createContact,
  listContacts,
  getContact,
  updateContact,
  deleteContact,
  createContactNote,
  listContactNotes,
  updateContactNote,
  deleteContactNote,
  createContactImport,
  listContactImports,
  getContactImport,
  startContactImport,
  listSuppressionList,
  putSuppressionEntry,
  deleteSuppressionEntry,
});
