import { clock } from '../platform/clock.js';
import { BUCKET } from '../platform/resources.js';
import { objectExists, signedDownloadUrl } from '../platform/storage.js';
import type { KnownValue } from '../platform/pii/redactor.js';
import type { PiiCategory } from '../platform/pii/categories.js';
import { RecordingLinkEntity, type Call } from './entities.js';
import { readCall } from './lifecycle.js';
import { callKnownValues, callRegions, redactionCategories } from './pii.js';
import { isShortCode } from './short-codes.js';

/**
 * What a recording's short code opens (the public recording page): the call it names and whether its
 * recording can be played now. Three outcomes — playable (a signed URL), unavailable (the call is
 * past the recording retention, or its object or the call is gone) and unknown (a code of the wrong
 * shape, or one never issued: undefined).
 */
export const PUBLIC_RECORDING_URL_SECONDS = 3600;

export interface PublicRecording {
  shortCode: string;
  workspaceId: string;
  callId: string;
  recording: { available: boolean; url: string | null; durationSeconds: number | null };
  agentName: string | null;
  endedAt: string | null;
  /** The call's PII redaction, when on: what a redactor of the page's texts needs (its known values). */
  piiRedaction?: { categories?: PiiCategory[]; known: KnownValue[]; regions: string[] };
}

function pageRedaction(call: Call | undefined): Pick<PublicRecording, 'piiRedaction'> {
  if (!call?.piiRedaction) return {};
  const categories = redactionCategories(call.piiRedaction);
  return {
    piiRedaction: {
      ...(categories ? { categories } : {}),
      known: callKnownValues(call),
      regions: callRegions(call),
    },
  };
}

/** Whether a recording made at `at` is past the bucket's retention (its lifecycle rule deletes it). */
export function pastRetention(at: string, now: Date = clock.now()): boolean {
  return now.getTime() - Date.parse(at) > BUCKET.recordingRetentionDays * 86_400_000;
}

export async function publicRecording(shortCode: string): Promise<PublicRecording | undefined> {
  if (!isShortCode(shortCode)) return undefined;
  const { data: link } = await RecordingLinkEntity.get({ shortCode }).go();
  if (!link) return undefined;
  const call = await readCall(link.workspaceId, link.callId);
  const unavailable = { available: false, url: null, durationSeconds: null };
  const base = {
    shortCode,
    workspaceId: link.workspaceId,
    callId: link.callId,
    agentName: call?.agentName ?? null,
    endedAt: call?.endedAt ?? null,
    ...pageRedaction(call),
  };
  if (!call?.recordingKey || pastRetention(call.endedAt ?? call.createdAt))
    return { ...base, recording: unavailable };
  if (!(await objectExists(call.recordingKey))) return { ...base, recording: unavailable };
  return {
    ...base,
    recording: {
      available: true,
      url: await signedDownloadUrl(call.recordingKey, PUBLIC_RECORDING_URL_SECONDS),
      durationSeconds: call.recordingDurationSeconds ?? null,
    },
  };
}
