import { defineRoute } from '../platform/http/route.js';
import * as pagination from '../platform/pagination.js';
import * as contacts from './schemas.js';

const CONTACTS = '/api/v1/workspaces/{workspace_id}/contacts';
const CONTACT = `${CONTACTS}/{contact_id}`;
const NOTES = `${CONTACT}/notes`;
const IMPORTS = `${CONTACTS}/imports`;
const SUPPRESSION_LIST = '/api/v1/organisations/{organisation_id}/suppression-list';

/**
 * Contacts and their notes (workspace: any role reads, members and admins write; API keys with
 * `contacts:read` / `contacts:write`, in their own workspace), and the organisation's suppression
 * list (users only: every member reads it, owners and admins change it; an API key belongs to one
 * workspace and is refused, 403).
 */
export const contactRoutes = {
  createContact: defineRoute({
    method: 'POST',
    path: CONTACTS,
    summary: 'Create a contact',
    description:
      'Create a contact (member; free). A phone number in national form is read in the workspace’s country; ' +
      '409 {error, contact_id} when another contact has the phone number or email',
    auth: 'user_or_api_key',
    scope: 'contacts:write',
    body: contacts.CreateContactBody,
    response: contacts.ContactResponse,
    // workspaceEvents: contact.created (functions/platform/workspace-events.ts).
    errors: {
      409: {
        when: 'The phone number or email address belongs to another contact (its id in contact_id)',
        body: contacts.DuplicateContactBody,
      },
    },
    access: { table: 'readwrite', sendsTo: ['workspaceEvents'] },
  }),
  listContacts: defineRoute({
    method: 'GET',
    path: CONTACTS,
    summary: 'List contacts',
    description:
      'The workspace’s contacts, newest first, or those matching q (a prefix of a name, email or phone number), ' +
      '50 a page; filters contactability, source, tag. A filtered page may be short, even empty, with a ' +
      'next_cursor: the list has ended only when next_cursor is null (viewer)',
    auth: 'user_or_api_key',
    scope: 'contacts:read',
    query: contacts.ContactListQuery,
    response: contacts.ContactList,
    access: { table: 'readwrite' },
  }),
  getContact: defineRoute({
    method: 'GET',
    path: CONTACT,
    summary: 'Get a contact',
    description: 'A contact (viewer)',
    auth: 'user_or_api_key',
    scope: 'contacts:read',
    response: contacts.ContactResponse,
    access: { table: 'readwrite' },
  }),
  updateContact: defineRoute({
    method: 'PATCH',
    path: CONTACT,
    summary: 'Update a contact',
    description:
      'Change a contact: null removes phone, email or timezone (one of phone and email stays); tags are replaced, ' +
      'attributes merged (null removes a key); 409 {error, contact_id} when the phone or email is another contact’s (member)',
    auth: 'user_or_api_key',
    scope: 'contacts:write',
    body: contacts.UpdateContactBody,
    response: contacts.ContactResponse,
    errors: {
      409: {
        when: 'The phone number or email address belongs to another contact (its id in contact_id)',
        body: contacts.DuplicateContactBody,
      },
    },
    access: { table: 'readwrite' },
  }),
  deleteContact: defineRoute({
    method: 'DELETE',
    path: CONTACT,
    summary: 'Delete a contact',
    description:
      'Delete a contact and its notes and call links (member). The contact is gone at once; a contact with ' +
      'more than 100 notes and call links has the rest deleted in the background, within moments',
    auth: 'user_or_api_key',
    scope: 'contacts:write',
    successStatus: 204,
    errors: {
      503: 'Until the table’s migration has run: this contact’s notes are being moved to their new place (`Retry-After: 1`); nothing else changed',
    },
    // imports: the purge of what the request leaves of its notes and call links (purge.ts).
    access: { table: 'readwrite', sendsTo: ['imports'] },
  }),
  createContactNote: defineRoute({
    method: 'POST',
    path: NOTES,
    summary: 'Create a contact note',
    description: 'Add a note to a contact: text of 1–500 characters, channel (default direct) (member)',
    auth: 'user_or_api_key',
    scope: 'contacts:write',
    body: contacts.CreateNoteBody,
    response: contacts.NoteResponse,
    access: { table: 'readwrite' },
  }),
  listContactNotes: defineRoute({
    method: 'GET',
    path: NOTES,
    summary: "List a contact's notes",
    description: 'A contact’s notes, newest first (viewer)',
    auth: 'user_or_api_key',
    scope: 'contacts:read',
    query: pagination.ListQuery,
    response: contacts.NoteList,
    errors: {
      503: 'Until the table’s migration has run: this contact’s notes are being moved to their new place (`Retry-After: 1`); nothing else changed',
    },
    access: { table: 'readwrite' },
  }),
  updateContactNote: defineRoute({
    method: 'PATCH',
    path: `${NOTES}/{note_id}`,
    summary: 'Update a contact note',
    description: 'Change a note’s text or channel (member)',
    auth: 'user_or_api_key',
    scope: 'contacts:write',
    body: contacts.UpdateNoteBody,
    response: contacts.NoteResponse,
    errors: {
      503: 'Until the table’s migration has run: this contact’s notes are being moved to their new place (`Retry-After: 1`); nothing else changed',
    },
    access: { table: 'readwrite' },
  }),
  deleteContactNote: defineRoute({
    method: 'DELETE',
    path: `${NOTES}/{note_id}`,
    summary: 'Delete a contact note',
    description: 'Delete a note (member)',
    auth: 'user_or_api_key',
    scope: 'contacts:write',
    successStatus: 204,
    errors: {
      503: 'Until the table’s migration has run: this contact’s notes are being moved to their new place (`Retry-After: 1`); nothing else changed',
    },
    access: { table: 'readwrite' },
  }),
  createContactImport: defineRoute({
    method: 'POST',
    path: IMPORTS,
    summary: 'Create a contact import',
    description:
      'Import contacts from a CSV or vCard (3.0/4.0) file (member). JSON {format, file_name?}: a pending job and ' +
      'upload_url, a presigned PUT for a file up to 50 MB; PUT the file there, then POST …/imports/{job_id}/start. ' +
      'Or send the file itself (at most 5 MB, else 413) as the body with Content-Type text/csv or text/vcard ' +
      '(?file_name= optional): the job starts at once. Rows merge with existing contacts by phone, then email ' +
      '(empty fields filled, nothing overwritten); see docs/data-model.md, contact imports',
    auth: 'user_or_api_key',
    scope: 'contacts:write',
    body: contacts.CreateImportBody,
    rawBody: ['text/csv', 'text/vcard', 'text/x-vcard'],
    response: contacts.CreatedImportResponse,
    successStatus: 202,
    errors: { 413: 'The file sent as the body is over 5 MB' },
    access: { table: 'readwrite', bucket: 'readwrite', sendsTo: ['imports'] },
  }),
  listContactImports: defineRoute({
    method: 'GET',
    path: IMPORTS,
    summary: 'List contact imports',
    description: 'The workspace’s contact imports, newest first (viewer)',
    auth: 'user_or_api_key',
    scope: 'contacts:read',
    query: contacts.ImportListQuery,
    response: contacts.ImportList,
    access: { table: 'readwrite' },
  }),
  getContactImport: defineRoute({
    method: 'GET',
    path: `${IMPORTS}/{job_id}`,
    summary: 'Get a contact import',
    description:
      'An import: status (pending, processing, completed, failed), progress {done, total} (rows), counts {total, created, merged, ' +
      'rejected} (created + merged + rejected = total when completed), the first 100 rejected rows and the first 100 ' +
      'rows imported with a warning (an invalid phone or email dropped beside a valid other one) (viewer)',
    auth: 'user_or_api_key',
    scope: 'contacts:read',
    response: contacts.ImportResponse,
    access: { table: 'readwrite' },
  }),
  startContactImport: defineRoute({
    method: 'POST',
    path: `${IMPORTS}/{job_id}/start`,
    summary: 'Start a contact import',
    description:
      'Start a pending import once its file is uploaded to upload_url: 409 when it is not there yet, 413 (and the ' +
      'job failed) over 50 MB; an import started already is answered as it is (member)',
    auth: 'user_or_api_key',
    scope: 'contacts:write',
    response: contacts.ImportSummary,
    successStatus: 202,
    errors: { 409: 'The file has not been uploaded yet', 413: 'The uploaded file is over 50 MB' },
    access: { table: 'readwrite', bucket: 'read', sendsTo: ['imports'] },
  }),
  listSuppressionList: defineRoute({
    method: 'GET',
    path: SUPPRESSION_LIST,
    summary: 'List the do-not-call list',
    description:
      'The organisation’s do-not-call numbers, by number (any member; users only: API keys are refused)',
    auth: 'user',
    query: pagination.ListQuery,
    response: contacts.SuppressionList,
    access: { table: 'readwrite' },
  }),
  putSuppressionEntry: defineRoute({
    method: 'PUT',
    path: `${SUPPRESSION_LIST}/{phone}`,
    summary: 'Add a number to the do-not-call list',
    description:
      'Add a number to the do-not-call list, or change its reason: {phone} is E.164, URL-encoded (%2B61…) or ' +
      'with a literal + (owner, admin)',
    auth: 'user',
    body: contacts.PutSuppressionBody,
    response: contacts.SuppressionResponse,
    successStatus: 200,
    access: { table: 'readwrite' },
  }),
  deleteSuppressionEntry: defineRoute({
    method: 'DELETE',
    path: `${SUPPRESSION_LIST}/{phone}`,
    summary: 'Remove a number from the do-not-call list',
    description: 'Take a number off the do-not-call list (owner, admin)',
    auth: 'user',
    successStatus: 204,
    access: { table: 'readwrite' },
  }),
};
