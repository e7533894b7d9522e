import { callKnownValues } from '../../calling/pii.js';
import { getContact } from '../../contacts/lookup.js';
import { clock } from '../../platform/clock.js';
import { logger } from '../../platform/logger.js';
import { Redactor } from '../../platform/pii/redactor.js';
import { piiDetector } from '../../providers/pii/index.js';
import type { ConversationIncident, ConversationRedaction, TranscriptEntry } from '../engine/model.js';

/**
 * What a call with PII redaction stores of its conversation: the transcript (each speaker's
 * consecutive lines read together, so a value said over two prompts is found), the tool calls'
 * arguments as stored and the incidents' details, through one redactor, so a value is one token
 * throughout; names and addresses in free text also by the outside detector where one is configured
 * (providers/pii: Comprehend; failing, it finds nothing and the rules still apply). The call's contact (name, phone, e-mail) is read here, once, for its known values. A
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
  // Names and addresses in free text: the outside detector (Comprehend in the cloud), one batch per call.
  const wanted =
    !redaction.categories || redaction.categories.some((c) => c === 'person_name' || c === 'address');
  const detector = piiDetector();
  const detected =
    wanted && detector.name !== 'local'
      ? await detector.detect(
          stored.transcript.map((line) => line.text),
          redaction.language ?? 'en',
        )
      : [];
  const transcript = redactor.redactLines(stored.transcript, detected);
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
