import { useState } from 'preact/hooks';
import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api/client';
import { knowledgeBaseQueries } from '../api/queries/knowledge-bases';
import { Field, FormActions, FormError, ListPage, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

type Kind = 'listings' | 'documents';

function NewKnowledgeBase({ onDone }: { onDone: () => void }) {
  const workspace_id = useWorkspaceId();
  const { route } = useLocation();
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const [kind, setKind] = useState<Kind>('listings');
  const create = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/knowledge-bases', {
          params: { path: { workspace_id } },
          body: { name, kind },
        }),
      ),
    onSuccess: (base) => {
      void queries.invalidateQueries({ queryKey: knowledgeBaseQueries.lists(workspace_id) });
      onDone();
      route(`/knowledge/${base.id}`);
    },
  });
  return (
    <form
      class="card grid"
      aria-label="New knowledge base"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <Field label="Knowledge base name" name="name" error={create.error}>
        {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} required />}
      </Field>
      <Field label="Kind" name="kind" error={create.error}>
        {(p) => (
          <select {...p} value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
            <option value="listings">Listings</option>
            <option value="documents">Documents</option>
          </select>
        )}
      </Field>
      <FormError error={create.error} />
      <FormActions submit="Create knowledge base" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}

export default function Knowledge() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  return (
    <ListPage
      title="Knowledge"
      newLabel="New knowledge base"
      canWrite={canWrite}
      form={(close) => <NewKnowledgeBase onDone={close} />}
      caption="Knowledge bases"
      {...knowledgeBaseQueries.list(workspace_id)}
      rowKey={(kb) => kb.id}
      empty="No knowledge bases yet."
      columns={[
        { label: 'Name', render: (kb) => <a href={`/knowledge/${kb.id}`}>{kb.name}</a> },
        { label: 'Kind', render: (kb) => kb.kind },
        { label: 'Items', render: (kb) => kb.item_count },
        { label: 'Updated', render: (kb) => when(kb.updated_at) },
      ]}
    />
  );
}
