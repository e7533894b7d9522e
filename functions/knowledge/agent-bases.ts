import { ValidationError } from '../platform/errors.js';
import { existingKnowledgeBases } from './service.js';

/**
 * An agent's `knowledge_base_ids` must name knowledge bases of its workspace: 422 on
 * `body.knowledge_base_ids.<i>` for each that does not (the agents' create and update handlers call
 * it before they write; agents sit below knowledge, so their handlers compose the two).
 */
export async function requireKnowledgeBases(workspaceId: string, ids: string[] | undefined): Promise<void> {
  if (!ids || ids.length === 0) return;
  const found = await existingKnowledgeBases(workspaceId, ids);
  const missing = ids.flatMap((id, i) => (found.has(id) ? [] : [{ id, i }]));
  if (missing.length === 0) return;
  throw new ValidationError(
    missing.map(({ id, i }) => ({
      type: 'value_error',
      loc: ['body', 'knowledge_base_ids', i],
      msg: `Value error, knowledge base ${id} not found in this workspace`,
      input: id,
    })),
  );
}
