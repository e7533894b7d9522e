import { clock } from '../platform/clock.js';
import { changeContact } from './writes.js';

/** A contact's profile: the facts enrichment finds in its calls, merged into what it knew. */

export type ProfileFacts = Record<string, unknown>;

/**
 * Merges enrichment facts into the contact's profile (lists are merged without duplicates, other
 * values replaced), conditioned on the contact not having changed since it was read.
 */
export async function mergeProfile(
  workspaceId: string,
  contactId: string,
  facts: ProfileFacts,
): Promise<ProfileFacts> {
  return changeContact(workspaceId, contactId, (current) => {
    const merged = mergeFacts((current.profile ?? {}) as ProfileFacts, facts);
    const now = clock.now().toISOString();
    return {
      write: true,
      changes: { profile: merged, profileUpdatedAt: now, updatedAt: now },
      result: merged,
    };
  });
}

export function mergeFacts(before: ProfileFacts, facts: ProfileFacts): ProfileFacts {
  const merged: ProfileFacts = { ...before };
  for (const [key, value] of Object.entries(facts)) {
    if (value === undefined || value === null) continue;
    const previous = merged[key];
    if (Array.isArray(value) && Array.isArray(previous)) {
      const seen = new Set(previous.map((v) => JSON.stringify(v)));
      merged[key] = [...previous, ...value.filter((v) => !seen.has(JSON.stringify(v)))];
    } else {
      merged[key] = value;
    }
  }
  return merged;
}
