import { useQuery } from '@tanstack/preact-query';
import { knowledgeBaseQueries } from '../../api/queries/knowledge-bases';
import { Empty, ErrorState, FieldMessages, Loading } from '../../components/ui';
import type { SectionProps } from './draft';

/** Checkboxes of the workspace's knowledge bases; the checked ones are those the agent searches. */
export function KnowledgeSection({ workspaceId, draft, edit, error }: SectionProps) {
  const bases = useQuery(knowledgeBaseQueries.all(workspaceId));
  const selected = draft.knowledgeBases;
  const toggle = (id: string, on: boolean) =>
    edit({ knowledgeBases: on ? [...selected, id] : selected.filter((s) => s !== id) });
  return (
    <fieldset class="subform">
      <legend>Knowledge bases</legend>
      {bases.isPending && <Loading what="Loading knowledge bases…" />}
      {bases.isError && <ErrorState error={bases.error} retry={() => void bases.refetch()} />}
      {bases.data?.length === 0 && (
        <Empty>
          This workspace has no knowledge bases yet (<a href="/knowledge">Knowledge</a>).
        </Empty>
      )}
      {bases.data?.map((base) => (
        <label class="check" key={base.id}>
          <input
            type="checkbox"
            checked={selected.includes(base.id)}
            onChange={(e) => toggle(base.id, e.currentTarget.checked)}
          />{' '}
          {base.name} <span class="muted">({base.kind})</span>
        </label>
      ))}
      {/* A base deleted since it was chosen: shown, so that it can be unchecked. */}
      {bases.data &&
        selected
          .filter((id) => !bases.data.some((base) => base.id === id))
          .map((id) => (
            <label class="check" key={id}>
              <input type="checkbox" checked onChange={(e) => toggle(id, e.currentTarget.checked)} /> {id}{' '}
              <span class="muted">(not found)</span>
            </label>
          ))}
      <FieldMessages error={error} name="knowledge_base_ids" />
    </fieldset>
  );
}
