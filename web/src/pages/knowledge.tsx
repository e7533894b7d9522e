import { useState } from 'preact/hooks';
import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { api, ok } from '../api/client';
import { Field, FormError, PageHeader, PagedTable, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

export default function Knowledge() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/knowledge-bases', {
          params: { path: { workspace_id } },
          body: { name, kind: 'documents' },
        }),
      ),
    onSuccess: () => {
      setName('');
      void queries.invalidateQueries({ queryKey: ['knowledge-bases', workspace_id] });
    },
  });
  return (
    <section>
      <PageHeader title="Knowledge" />
      {canWrite && (
        <form
          class="card row"
          aria-label="New knowledge base"
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Field label="Knowledge base name" name="name" error={create.error}>
            {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} required />}
          </Field>
          <button type="submit" class="primary" disabled={create.isPending}>
            Create knowledge base
          </button>
          <FormError error={create.error} />
        </form>
      )}
      <PagedTable
        caption="Knowledge bases"
        queryKey={['knowledge-bases', workspace_id]}
        rowKey={(kb) => kb.id}
        empty="No knowledge bases yet."
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/knowledge-bases', {
              params: { path: { workspace_id }, query: { cursor } },
            }),
          )
        }
        columns={[
          { label: 'Name', render: (kb) => kb.name },
          { label: 'Kind', render: (kb) => kb.kind },
          { label: 'Items', render: (kb) => kb.item_count },
          { label: 'Updated', render: (kb) => when(kb.updated_at) },
        ]}
      />
    </section>
  );
}
