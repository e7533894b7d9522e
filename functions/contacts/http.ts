import { domainHandler } from '../platform/http/index.js';
import { contactRoutes } from './routes.js';

/** The contacts domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(contactRoutes, {
  createContact: () => import('./handlers/create-contact.js'),
  listContacts: () => import('./handlers/list-contacts.js'),
  getContact: () => import('./handlers/get-contact.js'),
  updateContact: () => import('./handlers/update-contact.js'),
  deleteContact: () => import('./handlers/delete-contact.js'),
  createContactNote: () => import('./handlers/create-contact-note.js'),
  listContactNotes: () => import('./handlers/list-contact-notes.js'),
  updateContactNote: () => import('./handlers/update-contact-note.js'),
  deleteContactNote: () => import('./handlers/delete-contact-note.js'),
  createContactImport: () => import('./handlers/create-contact-import.js'),
  listContactImports: () => import('./handlers/list-contact-imports.js'),
  getContactImport: () => import('./handlers/get-contact-import.js'),
  startContactImport: () => import('./handlers/start-contact-import.js'),
  listSuppressionList: () => import('./handlers/list-suppression-list.js'),
  putSuppressionEntry: () => import('./handlers/put-suppression-entry.js'),
  deleteSuppressionEntry: () => import('./handlers/delete-suppression-entry.js'),
});
