import { WorkspaceEntity, workspaceCountry } from '../access/entities.js';
import { updateContact } from '../contacts/changes.js';
import { findContactByEmail, findContactByPhone, getContact } from '../contacts/lookup.js';
import type { Contact } from '../contacts/entities.js';
import { contactView } from '../contacts/views.js';
import type { ApiKeyPrincipal } from '../platform/auth/principal.js';
import { HttpError, ValidationError } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { IDEMPOTENCY_IN_FLIGHT } from '../platform/idempotency.js';
import { clock } from '../platform/clock.js';
import { isE164 } from '../platform/phone.js';
import { EmailSendError, sendEmail } from '../providers/email/index.js';
import { render, type SignalFacts } from './conditions.js';
import type { WorkflowRun } from './entities.js';
import { addRunNote } from './notes.js';
import type { Action, ActionType } from './schemas.js';

/**
 * The Task stage's actions, each through the service that owns it and charged as it is: a call
 * through start-call (its checks, credits and concurrency included), an SMS through the SMS service
 * (5 credits a segment, opt-outs respected), an email through the email port, a contact change or a
 * note through the contacts service. A refusal or a provider failure is
 * a TaskFailed (recorded on the run); anything else is thrown and the run's message is received again.
 */
export class TaskFailed extends Error {
  override readonly name = 'TaskFailed';
}

export type TaskResult = Record<string, unknown>;

export interface RunFacts {
  contactId?: string;
  /** What Signal conditions and `{{…}}` placeholders read. */
  signal: SignalFacts;
  /** The phone number a call or an SMS goes to: the contact's, else the event's. */
  phone?: string;
  email?: string;
  /**
   * Adds the note `noteId` to the run's contact, once (a repeat with the same id finds it there);
   * undefined when there is no contact (or it was deleted).
   */
  addNote(text: string, noteId: string): Promise<string | undefined>;
}

const str = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

/** The phone number an event names its contact by, by event type. */
function eventPhone(type: string, data: Record<string, unknown>): string | undefined {
  const direct = str(data.phone) ?? str(data.contact_phone);
  if (direct) return direct;
  if (type === 'sms.received') return str(data.from_phone) ?? str(data.from);
  if (type === 'call.ended') {
    return data.direction === 'inbound' ? str(data.from_phone) : str(data.to_phone);
  }
  return undefined;
}

/**
 * The run's contact: the event's `contact_id` (a contact.created event's own `id`), else the contact
 * with the event's phone number or email address; and what conditions read.
 */
export async function loadFacts(run: WorkflowRun): Promise<RunFacts> {
  const event = run.event as { type: string; data: Record<string, unknown> };
  const data = event.data ?? {};
  const workspaceId = run.workspaceId;
  let contact: Contact | null = null;
  const contactId =
    run.contactId ??
    str(data.contact_id) ??
    (event.type === 'contact.created' ? str(data.id) : undefined) ??
    str((data.contact as Record<string, unknown> | undefined)?.id);
  // As the API shows it: its call summary merged in (the last call, last_contacted_at).
  const shown = { withCalls: true };
  if (contactId) contact = await getContact(workspaceId, contactId, shown);
  const phone = eventPhone(event.type, data);
  if (!contact && phone && isE164(phone)) contact = await findContactByPhone(workspaceId, phone, shown);
  const email = str(data.email);
  if (!contact && email) contact = await findContactByEmail(workspaceId, email, shown);

  const contactFacts = contact
    ? {
        ...contactView(contact),
        last_call: contact.lastCallId
          ? {
              id: contact.lastCallId,
              at: contact.lastCallAt ?? null,
              sentiment: contact.lastCallSentiment ?? null,
              summary: contact.lastCallSummary ?? null,
            }
          : null,
      }
    : undefined;
  const found = contact;
  return {
    contactId: found?.contactId,
    signal: { event: data, contact: contactFacts },
    phone: found?.phone ?? phone,
    email: found?.email ?? email,
    async addNote(text, noteId) {
      if (!found) return undefined;
      return addRunNote({ workspaceId, contactId: found.contactId, noteId, text, authorId: run.workflowId });
    },
  };
}

/** The idempotency key of a run's task: one call, SMS or email per run, however often it is retried. */
export const taskKey = (run: Pick<WorkflowRun, 'runId'>): string => `workflow-run-${run.runId}`;

/**
 * Runs the task. `prepared` is the input recorded by an earlier attempt (used as is); otherwise the
 * input is built from the action and the facts and handed to `prepare` to be recorded first.
 */
export async function runTask(
  run: WorkflowRun,
  action: Action,
  facts: RunFacts,
  recorded: {
    prepared?: Record<string, unknown>;
    prepare: (prepared: Record<string, unknown>) => Promise<void>;
  },
): Promise<TaskResult> {
  let input = recorded.prepared;
  const retry = input !== undefined;
  if (!input) {
    input = prepareInput(action, facts);
    await recorded.prepare(input);
  }
  try {
    return await perform(run, action.type, input, facts, retry);
  } catch (error) {
    if (error instanceof TaskFailed) throw error;
    if (error instanceof HttpError) {
      // Too many concurrent calls: not a failure of the task, try again later (the message returns).
      // So is a call whose idempotency key an earlier attempt still holds (it lapses, then replays).
      if (error.status === 429 || error.status >= 500 || error.message === IDEMPOTENCY_IN_FLIGHT) throw error;
      throw new TaskFailed(`${action.type} refused (${error.status}): ${error.message}`);
    }
    if (error instanceof ValidationError) {
      throw new TaskFailed(
        `${action.type} refused (422): ${error.detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; ')}`,
      );
    }
    if (error instanceof EmailSendError) throw new TaskFailed(`email not sent: ${error.message}`);
    throw error;
  }
}

/** The task's exact request, placeholders filled in. Missing recipients are a TaskFailed. */
function prepareInput(action: Action, facts: RunFacts): Record<string, unknown> {
  const fill = (template: string) => render(template, facts.signal);
  switch (action.type) {
    case 'call': {
      const phone = action.to_phone ? fill(action.to_phone).trim() : facts.phone;
      if (!phone || !isE164(phone)) throw new TaskFailed('No phone number to call');
      const parameters = Object.fromEntries(
        Object.entries(action.parameters ?? {}).map(([key, value]) => [key, fill(value)]),
      );
      return { agent_id: action.agent_id, to_phone: phone, parameters };
    }
    case 'sms': {
      const phone = action.to_phone ? fill(action.to_phone).trim() : facts.phone;
      if (!phone || !isE164(phone)) throw new TaskFailed('No phone number to text');
      return {
        to_phone: phone,
        ...(action.to_phone || !facts.contactId ? {} : { contact_id: facts.contactId }),
        body: fill(action.body),
        prepared_at: clock.now().toISOString(),
      };
    }
    case 'email': {
      const to = action.to ? fill(action.to).trim() : facts.email;
      if (!to || !/^[^@\s]+@[^@\s]+$/.test(to)) throw new TaskFailed('No email address to write to');
      return { to, subject: fill(action.subject), body: fill(action.body) };
    }
    case 'update_contact':
      if (!facts.contactId) throw new TaskFailed('No contact to update');
      return { contact_id: facts.contactId, fields: action.fields };
    case 'add_note':
      if (!facts.contactId) throw new TaskFailed('No contact to add a note to');
      // The note's id is fixed with the input: a retry finds the note instead of adding another.
      return {
        contact_id: facts.contactId,
        text: fill(action.text).slice(0, 500) || action.text,
        note_id: newId('note'),
      };
  }
}

async function perform(
  run: WorkflowRun,
  type: ActionType,
  input: Record<string, unknown>,
  facts: RunFacts,
  retry: boolean,
): Promise<TaskResult> {
  const text = (key: string) => String(input[key] ?? '');
  switch (type) {
    case 'call': {
      // The workflow places the call in its workspace, as an API key of the workspace would: the
      // same checks (agent, number, credits, concurrency) and the call's created_by is the workflow.
      const principal: ApiKeyPrincipal = {
        kind: 'api_key',
        keyId: run.workflowId,
        workspaceId: run.workspaceId,
        organisationId: run.organisationId,
        scopes: ['start_call'],
      };
      const { startCall } = await import('../calling/start-call.js');
      const call = await startCall({
        principal,
        workspaceId: run.workspaceId,
        agentId: text('agent_id'),
        body: {
          to_phone: text('to_phone'),
          parameters: (input.parameters as Record<string, string> | undefined) ?? {},
        },
        idempotencyKey: taskKey(run),
      });
      return { action: 'call', call_id: call.id, to_phone: call.to_phone };
    }
    case 'sms': {
      const { runSms, sendRunSms } = await import('./sms-task.js');
      const message = (retry ? await runSms(run, input) : undefined) ?? (await sendRunSms(run, input));
      if (message.status === 'failed')
        throw new TaskFailed(`sms not sent: ${message.failureReason ?? 'failed'}`);
      return {
        action: 'sms',
        sms_id: message.messageId,
        to_phone: message.toPhone,
        status: message.status,
        ...(message.held ? { held: true } : {}),
      };
    }
    case 'email': {
      const receipt = await sendEmail({
        to: text('to'),
        subject: text('subject'),
        text: text('body'),
        idempotencyKey: taskKey(run),
      });
      return { action: 'email', message_id: receipt.messageId, to: text('to') };
    }
    case 'update_contact': {
      const { data: workspace } = await WorkspaceEntity.get({ workspaceId: run.workspaceId }).go();
      const contactId = text('contact_id');
      await updateContact(run.workspaceId, contactId, input.fields as Parameters<typeof updateContact>[2], {
        country: workspaceCountry(workspace ?? {}),
      });
      return { action: 'update_contact', contact_id: contactId };
    }
    case 'add_note': {
      // An input recorded before note ids were fixed with it gets one now.
      const note = await facts.addNote(text('text'), text('note_id') || newId('note'));
      if (!note) throw new TaskFailed('The contact no longer exists');
      return { action: 'add_note', note_id: note, contact_id: text('contact_id') };
    }
  }
}

/** One line for the outcome's note. */
export function describeResult(type: ActionType, result: TaskResult): string {
  switch (type) {
    case 'call':
      return `called ${String(result.to_phone ?? '')} (call ${String(result.call_id ?? '')})`;
    case 'sms':
      return `sent an SMS to ${String(result.to_phone ?? '')} (${String(result.sms_id ?? '')})`;
    case 'email':
      return `emailed ${String(result.to ?? '')}`;
    case 'update_contact':
      return 'updated the contact';
    case 'add_note':
      return `added a note (${String(result.note_id ?? '')})`;
  }
}
