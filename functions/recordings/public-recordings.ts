import { publicRecording, type PublicRecording } from '../calling/service.js';
import { OrganisationEntity, WorkspaceEntity } from '../access/entities.js';
import { notFound } from '../platform/errors.js';
import { repliesFor, type RepliesSource } from './replies.js';
import { PUBLIC_RECORDING_NOT_FOUND, type Reply } from './schemas.js';

/** A short code's recording and replies, or undefined for an unknown or malformed code. */
export async function findPublicRecording(
  shortCode: string,
  replies: RepliesSource,
): Promise<{ found: PublicRecording; replies: Reply[] } | undefined> {
  const found = await publicRecording(shortCode);
  if (!found) return undefined;
  return { found, replies: await repliesFor(replies, shortCode) };
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
