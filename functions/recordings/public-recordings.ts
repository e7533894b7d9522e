import { publicRecording, type PublicRecording } from '../calling/service.js';
import { OrganisationEntity, WorkspaceEntity } from '../access/entities.js';
import { clock } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';
import { Redactor } from '../platform/pii/redactor.js';
import { repliesFor, type RepliesSource } from './replies.js';
import { PUBLIC_RECORDING_NOT_FOUND, type Reply } from './schemas.js';

/**
 * A short code's recording and replies, or undefined for an unknown or malformed code. The replies of a
 * call with PII redaction are shown redacted (one redactor for the page, with the call's known values):
 * the SMS domain keeps them as received (the business's conversation with the caller), the page, which
 * anyone with its link opens, shows tokens.
 */
export async function findPublicRecording(
  shortCode: string,
  replies: RepliesSource,
): Promise<{ found: PublicRecording; replies: Reply[] } | undefined> {
  const found = await publicRecording(shortCode);
  if (!found) return undefined;
  const shown = await repliesFor(replies, shortCode);
  if (!found.piiRedaction) return { found, replies: shown };
  const redactor = new Redactor({ ...found.piiRedaction, year: clock.now().getUTCFullYear() });
  // Each reply on its own (digits of two messages are no one number), the caller's words.
  return { found, replies: shown.map((reply) => ({ ...reply, body: redactor.redact(reply.body) })) };
}

/** Whose call it was, as the public page names it: the organisation's name (null once it is gone). */
export async function businessNameOf(workspaceId: string): Promise<string | null> {
  const { data: workspace } = await WorkspaceEntity.get({ workspaceId }).go();
  if (!workspace) return null;
  const { data: organisation } = await OrganisationEntity.get({
    organisationId: workspace.organisationId,
  }).go();
  return organisation?.name ?? null;
}

export async function requirePublicRecording(
  shortCode: string,
  replies: RepliesSource,
): Promise<{ found: PublicRecording; replies: Reply[] }> {
  const result = await findPublicRecording(shortCode, replies);
  if (!result) throw notFound(PUBLIC_RECORDING_NOT_FOUND);
  return result;
}
