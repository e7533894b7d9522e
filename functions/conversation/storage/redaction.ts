import { callKnownValues } from '../../calling/pii.js';
import { getContact } from '../../contacts/lookup.js';
import { clock } from '../../platform/clock.js';
import { logger } from '../../platform/logger.js';
import { Redactor } from '../../platform/pii/redactor.js';
import type { ConversationIncident, ConversationRedaction, TranscriptEntry } from '../engine/model.js';

/**
 * What a call with PII redaction stores of its conversation: the transcript (each speaker's
 * consecutive lines read together, so a value said over two prompts is found), the tool calls'
 * arguments as stored and the incidents' details, through one redactor, so a value is one token
 * throughout. The call's contact (name, phone, e-mail) is read here, once, for its known values. A
 * line the redactor fails on is stored as `[REDACTION_FAILED]`, never raw, with an incident.
 */
export async function redactConversation<
  L extends Pick<TranscriptEntry, 'role' | 'text'>,
  T extends { arguments: Record<string, unknown>; error?: string },
>(
  ref: { workspaceId: string; callId: string },
  redaction: ConversationRedaction,
  stored: { transcript: L[]; toolCalls: T[]; incidents: ConversationIncident[] },
): Promise<{ transcript: L[]; toolCalls: T[]; incidents: ConversationIncident[] }> {
  const contact = redaction.contactId ? await getContact(ref.workspaceId, redaction.contactId) : null;
  const known = [
    ...redaction.known,
    ...(contact
      ? callKnownValues({ parameters: {}, direction: 'inbound', fromPhone: '', toPhone: '' }, contact)
      : []),
  ];
  const redactor = new Redactor({
    ...(redaction.categories ? { categories: redaction.categories } : {}),
    known,
    regions: redaction.regions,
    year: clock.now().getUTCFullYear(),
  });
  const transcript = redactor.redactLines(stored.transcript);
  const toolCalls = stored.toolCalls.map((call) => ({
    ...call,
    arguments: redactor.redactJson(call.arguments) as Record<string, unknown>,
    ...(call.error !== undefined ? { error: redactor.redact(call.error) } : {}),
  }));
  const incidents = stored.incidents.map((incident) => ({
    ...incident,
    detail: redactor.redact(incident.detail),
  }));
  if (redactor.failures > 0) {
    incidents.push({
      at: clock.now().toISOString(),
      kind: 'redaction_failed',
      detail: `${redactor.failures} stored text(s) could not be redacted and were stored as [REDACTION_FAILED]`,
    });
    logger.error('pii redaction failed; the texts were stored as [REDACTION_FAILED]', {
      callId: ref.callId,
      failures: redactor.failures,
    });
  }
  return { transcript, toolCalls, incidents };
}
