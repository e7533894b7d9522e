import { callKnownValues } from '../../calling/pii.js';
import { getContact } from '../../contacts/lookup.js';
import { clock } from '../../platform/clock.js';
import { logger } from '../../platform/logger.js';
import { Redactor, type DetectedSpan } from '../../platform/pii/redactor.js';
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
  const redactor = await callRedactor(ref, redaction);
  const detected = await detectNamesAndAddresses(
    redaction,
    stored.transcript.map((line) => line.text),
  );
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

/**
 * A warm transfer's summary and whisper as stored on the call (conversation/transfer.ts): through a
 * redactor that has read the conversation so far first, so a value is the token the stored transcript
 * gives it (`[EMAIL_1]` in both); names and addresses by the outside detector where one is configured
 * (one batch: the lines and these texts). A text the redactor fails on is `[REDACTION_FAILED]`.
 */
export async function redactHandoff(
  ref: { workspaceId: string; callId: string },
  redaction: ConversationRedaction,
  conversation: Pick<TranscriptEntry, 'role' | 'text' | 'offsetSeconds'>[],
  texts: string[],
): Promise<string[]> {
  const lines = [...conversation].sort((a, b) => a.offsetSeconds - b.offsetSeconds);
  const [redactor, detected] = await Promise.all([
    callRedactor(ref, redaction),
    detectNamesAndAddresses(redaction, [...lines.map((line) => line.text), ...texts]),
  ]);
  redactor.redactLines(lines, detected.slice(0, lines.length));
  const out = texts.map((text, i) => redactor.redact(text, detected[lines.length + i] ?? []));
  if (redactor.failures > 0)
    logger.error('pii redaction of a transfer summary failed; stored as [REDACTION_FAILED]', {
      callId: ref.callId,
      failures: redactor.failures,
    });
  return out;
}

/** One call's redactor: its known values (parameters, numbers, and its contact's, read here once). */
async function callRedactor(
  ref: { workspaceId: string },
  redaction: ConversationRedaction,
): Promise<Redactor> {
  const contact = redaction.contactId ? await getContact(ref.workspaceId, redaction.contactId) : null;
  const known = [
    ...redaction.known,
    ...(contact
      ? callKnownValues({ parameters: {}, direction: 'inbound', fromPhone: '', toPhone: '' }, contact)
      : []),
  ];
  return new Redactor({
    ...(redaction.categories ? { categories: redaction.categories } : {}),
    known,
    regions: redaction.regions,
    year: clock.now().getUTCFullYear(),
  });
}

/** Names and addresses in free text: the outside detector (Comprehend in the cloud), one batch; locally none. */
async function detectNamesAndAddresses(
  redaction: ConversationRedaction,
  texts: string[],
): Promise<DetectedSpan[][]> {
  const wanted =
    !redaction.categories || redaction.categories.some((c) => c === 'person_name' || c === 'address');
  const detector = piiDetector();
  return wanted && detector.name !== 'local' ? detector.detect(texts, redaction.language ?? 'en') : [];
}
