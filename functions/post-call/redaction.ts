import { callKnownValues, callRegions } from '../calling/pii.js';
import { callKey } from '../calling/call-shards.js';
import { CallEntity, type Call } from '../calling/entities.js';
import { clock } from '../platform/clock.js';
import { deleteObject } from '../platform/storage.js';
import { isPiiCategory } from '../platform/pii/categories.js';
import { Redactor } from '../platform/pii/redactor.js';
import type { CallFacts, ContactFacts } from './payload.js';
import type { CallRecordWire } from './schemas.js';

/**
 * A call with PII redaction: its transcript was stored redacted (conversation/storage/record.ts), so
 * the record built from it, and the analysis judged on it, hold its tokens. What the summary, the
 * analysis' fields and a warm transfer's summary say beyond the transcript (a model may write a
 * known value it read elsewhere) is redacted here too, new values numbered after the transcript's
 * tokens. A record of a call without redaction is returned as it is.
 */
export function redactRecord(
  record: CallRecordWire,
  facts: CallFacts,
  contact?: ContactFacts,
): CallRecordWire {
  if (!facts.piiRedacted || !facts.piiRedaction) return record;
  const categories = facts.piiRedaction.categories?.filter(isPiiCategory);
  const redactor = new Redactor({
    ...(categories ? { categories } : {}),
    known: callKnownValues(facts, contact),
    regions: callRegions(facts),
    year: clock.now().getUTCFullYear(),
  });
  for (const turn of record.transcript) redactor.adoptTokens(turn.text);
  return {
    ...record,
    summary: redactor.redact(record.summary),
    ...(record.analysis
      ? { analysis: redactor.redactJson(record.analysis) as CallRecordWire['analysis'] }
      : {}),
    ...(record.transfer?.summary
      ? { transfer: { ...record.transfer, summary: redactor.redact(record.transfer.summary) } }
      : {}),
  };
}

/** A call whose agent drops recordings with PII redaction: its record is built without the recording. */
export const dropsRecording = (facts: Pick<CallFacts, 'piiRedaction'>): boolean =>
  facts.piiRedaction?.recordings === 'drop';

/**
 * `recordings: "drop"`: once the analysis is stored, the audio is deleted and the call no longer names
 * it (no `recording` in its detail). A redelivery finds it gone and does nothing.
 */
export async function dropRecording(call: Call | undefined): Promise<void> {
  if (!call?.recordingKey || call.piiRedaction?.recordings !== 'drop') return;
  await deleteObject(call.recordingKey);
  await CallEntity.patch(callKey(call.workspaceId, call.callId))
    .remove(['recordingKey', 'recordingDurationSeconds'])
    .go({ response: 'none' });
}
