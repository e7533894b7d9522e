import { analyseSentiment, summarise, type QuotedProperty, type TranscriptTurn } from './analysis.js';
import type { CallAnalysis } from './call-analysis.js';
import type { CallHandoff } from '../calling/handoffs.js';
import type { CallRecordWire, WebhookPayload } from './schemas.js';

/**
 * Builds the call's record (the post-call webhook's `data`) from the facts of a call. Pure: the
 * same facts always give the same record.
 */

/** What the pipeline needs to know about an ended call (read from the calling core). */
export interface CallFacts {
  callId: string;
  workspaceId: string;
  organisationId: string;
  agentId: string;
  agentName?: string;
  /** The agent's version the call ran (absent for calls made before versions). */
  agentVersion?: number;
  direction: 'inbound' | 'outbound';
  status: 'completed' | 'failed';
  endReason?: string;
  fromPhone: string;
  toPhone: string;
  createdBy?: string;
  createdAt: string;
  connectedAt?: string;
  endedAt?: string;
  durationSeconds?: number;
  parameters: Record<string, string>;
  transcript: TranscriptTurn[];
  recordingKey?: string;
  recordingDurationSeconds?: number;
  /** The recording's public short code (calling's short-codes.ts), once it has one. */
  shortCode?: string;
  quotedListings: QuotedProperty[];
  /** Answering-machine detection's result (an inbound call: human; not checked: unknown). */
  answeredBy?: 'human' | 'machine' | 'unknown';
  /** The voicemail message was left on a machine. */
  voicemailMessageLeft?: boolean;
  /** The agent's transfer of the call, when it made one. */
  transfer?: {
    mode: 'cold' | 'warm';
    to: string;
    summary?: string;
    status?: 'connected' | 'no_answer' | 'busy' | 'failed';
  };
  /** The contact linked to the call when it was made (the other party's number was the contact's). */
  contactId?: string;
  /** The agent speaking at the end (absent: the call's agent) and the handoffs to it (absent: none). */
  activeAgentId?: string;
  handoffs?: CallHandoff[];
  /** A test chat whose ticket did not ask for post-call actions: analysed, its actions not run. */
  skipActions?: boolean;
  /** The call's transcript was stored redacted (the call's PII redaction: categories, recordings). */
  piiRedacted?: boolean;
  piiRedaction?: { categories?: string[]; recordings?: 'keep' | 'drop' };
}

export interface ContactFacts {
  contactId: string;
  name?: string;
  phone?: string;
  email?: string;
}

/** The other party's number: who called in, or who was called. */
export const otherParty = (call: Pick<CallFacts, 'direction' | 'fromPhone' | 'toPhone'>): string =>
  call.direction === 'inbound' ? call.fromPhone : call.toPhone;

/** The agent's side of the call: the number SMS are sent from. */
export const agentNumber = (call: Pick<CallFacts, 'direction' | 'fromPhone' | 'toPhone'>): string =>
  call.direction === 'inbound' ? call.toPhone : call.fromPhone;

export const recordingApiPath = (workspaceId: string, callId: string): string =>
  `/api/v1/workspaces/${workspaceId}/calls/${callId}/recording`;

export function buildCallRecord(
  call: CallFacts,
  options: { publicBaseUrl: string; contact?: ContactFacts; analysis?: CallAnalysis },
): CallRecordWire {
  const sentiment = analyseSentiment(call.transcript);
  const properties = call.quotedListings.map((listing) => ({
    listing_id: listing.listingId,
    address: listing.address,
    price: listing.price,
  }));
  const summary = summarise({
    direction: call.direction,
    status: call.status,
    endReason: call.endReason,
    fromPhone: call.fromPhone,
    toPhone: call.toPhone,
    durationSeconds: call.durationSeconds,
    agentName: call.agentName,
    transcript: call.transcript,
    sentiment,
    properties: call.quotedListings,
  });
  const base = options.publicBaseUrl.replace(/\/+$/, '');
  return {
    call_id: call.callId,
    workspace_id: call.workspaceId,
    agent_id: call.agentId,
    agent_name: call.agentName ?? null,
    agent_version: call.agentVersion ?? null,
    direction: call.direction,
    status: call.status,
    end_reason: call.endReason ?? null,
    answered_by: call.answeredBy ?? 'unknown',
    voicemail_message_left: call.voicemailMessageLeft ?? false,
    pii_redacted: call.piiRedacted === true,
    transfer: call.transfer
      ? {
          mode: call.transfer.mode,
          to: call.transfer.to,
          summary: call.transfer.summary ?? null,
          status: call.transfer.status ?? null,
        }
      : null,
    from_phone: call.fromPhone,
    to_phone: call.toPhone,
    created_by: call.createdBy ?? null,
    created_at: call.createdAt,
    connected_at: call.connectedAt ?? null,
    ended_at: call.endedAt ?? null,
    duration_seconds: call.durationSeconds ?? 0,
    parameters: call.parameters,
    transcript: call.transcript.map((turn) => ({
      role: turn.role,
      text: turn.text,
      offset_seconds: turn.offsetSeconds,
      ...(turn.role === 'agent' ? { agent_id: turn.agentId ?? call.agentId } : {}),
    })),
    active_agent_id: call.activeAgentId ?? call.agentId,
    handoffs: call.handoffs ?? [],
    sentiment,
    summary,
    recording: call.recordingKey
      ? {
          key: call.recordingKey,
          url: `${base}${recordingApiPath(call.workspaceId, call.callId)}`,
          content_type: 'audio/wav',
          duration_seconds: call.recordingDurationSeconds ?? null,
          short_url: call.shortCode ? `${base}/r/${call.shortCode}` : null,
        }
      : null,
    contact: options.contact
      ? {
          contact_id: options.contact.contactId,
          name: options.contact.name ?? null,
          phone: options.contact.phone ?? null,
          email: options.contact.email ?? null,
        }
      : null,
    properties,
    analysis: options.analysis ?? null,
  };
}

export function webhookPayload(
  type: WebhookPayload['type'],
  record: CallRecordWire,
  timestamp: string,
): WebhookPayload {
  return { type, timestamp, data: record };
}

/** A realistic, clearly fictional call for `…/post-call-actions/{id}/test`. */
export function sampleCall(input: {
  workspaceId: string;
  organisationId: string;
  agentId: string;
  agentName?: string;
  agentVersion?: number;
  at: Date;
}): CallFacts {
  const ended = input.at.toISOString();
  const connected = new Date(input.at.getTime() - 62_000).toISOString();
  const created = new Date(input.at.getTime() - 70_000).toISOString();
  return {
    callId: 'call_00000000000000000000000000',
    workspaceId: input.workspaceId,
    organisationId: input.organisationId,
    agentId: input.agentId,
    agentName: input.agentName,
    ...(input.agentVersion !== undefined ? { agentVersion: input.agentVersion } : {}),
    direction: 'inbound',
    status: 'completed',
    endReason: 'completed',
    fromPhone: '+61491570156',
    toPhone: '+61491570157',
    createdAt: created,
    connectedAt: connected,
    endedAt: ended,
    durationSeconds: 62,
    parameters: { name: 'Alex Example' },
    transcript: [
      { role: 'agent', text: 'Hello, thanks for calling. How can I help?', offsetSeconds: 0 },
      {
        role: 'user',
        text: 'Hi, my name is Alex Example. What is the asking price for 12 Example Street?',
        offsetSeconds: 4,
      },
      {
        role: 'agent',
        text: 'The asking price for 12 Example Street, Sydney NSW 2000 is $1,250,000.',
        offsetSeconds: 9,
      },
      { role: 'user', text: 'Great, thanks, that is really helpful.', offsetSeconds: 15 },
    ],
    recordingKey: `recordings/${input.workspaceId}/call_00000000000000000000000000.wav`,
    recordingDurationSeconds: 62,
    quotedListings: [
      { listingId: 'lst_example_12', address: '12 Example Street, Sydney NSW 2000', price: '$1,250,000' },
    ],
  };
}

/** The sample call's analysis: the agent's own fields, each with an example value of its type. */
export function sampleAnalysis(
  fields: readonly { name: string; type: string; enumValues?: string[] }[],
): CallAnalysis {
  const example = (field: (typeof fields)[number]): string | number | boolean | null => {
    if (field.type === 'number') return 1250000;
    if (field.type === 'boolean') return true;
    if (field.type === 'enum') return field.enumValues?.[0] ?? null;
    return 'Example value';
  };
  return {
    source: 'model',
    summary:
      'Alex Example asked for the asking price of 12 Example Street. The agent quoted $1,250,000 and Alex thanked them.',
    call_successful: true,
    user_sentiment: 'positive',
    custom: Object.fromEntries(fields.map((field) => [field.name, example(field)])),
  };
}
