import { useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRoute } from 'preact-iso';
import { api, ok } from '../api/client';
import { contactQueries } from '../api/queries/contacts';
import { ErrorState, Field, FormError, Loading, PageHeader, PagedTable, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

function AddNote({ contact_id }: { contact_id: string }) {
  const workspace_id = useWorkspaceId();
  const queries = useQueryClient();
  const [text, setText] = useState('');
  const add = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/contacts/{contact_id}/notes', {
          params: { path: { workspace_id, contact_id } },
          body: { text },
        }),
      ),
    onSuccess: () => {
      setText('');
      void queries.invalidateQueries({ queryKey: contactQueries.notes(workspace_id, contact_id).queryKey });
    },
  });
  return (
    <form
      class="card"
      aria-label="Add a note"
      onSubmit={(e) => {
        e.preventDefault();
        add.mutate();
      }}
    >
      <Field label="Note" name="text" error={add.error} hint="Up to 500 characters.">
        {(p) => <textarea {...p} rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />}
      </Field>
      <FormError error={add.error} />
      <button type="submit" class="primary" disabled={add.isPending}>
        Add note
      </button>
    </form>
  );
}

export default function ContactDetail() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const contact_id = useRoute().params.id;
  const contact = useQuery(contactQueries.detail(workspace_id, contact_id));
  if (contact.isPending) return <Loading />;
  if (contact.isError) return <ErrorState error={contact.error} retry={() => void contact.refetch()} />;
  const c = contact.data;
  return (
    <section>
      <PageHeader title={`${c.first_name} ${c.last_name}`.trim() || c.phone || c.email || c.id} />
      <p>
        <a href="/contacts">All contacts</a>
        {c.phone && (
          <>
            {' · '}
            <a href={`/sms/threads/${c.id}`}>SMS thread</a>
          </>
        )}
      </p>
      <dl class="facts">
        <dt>Phone</dt>
        <dd>{c.phone ?? '—'}</dd>
        <dt>Email</dt>
        <dd>{c.email ?? '—'}</dd>
        <dt>Contactability</dt>
        <dd>{c.contactability}</dd>
        <dt>Source</dt>
        <dd>{c.source_label}</dd>
        <dt>Tags</dt>
        <dd>{c.tags.join(', ') || '—'}</dd>
        <dt>Last contacted</dt>
        <dd>{when(c.last_contacted_at)}</dd>
        {Object.entries(c.attributes).map(([name, value]) => [
          <dt key={`k-${name}`}>{name}</dt>,
          <dd key={`v-${name}`}>{value}</dd>,
        ])}
      </dl>
      <h2>Notes</h2>
      {canWrite && <AddNote contact_id={c.id} />}
      <PagedTable
        caption="Notes"
        {...contactQueries.notes(workspace_id, contact_id)}
        rowKey={(note) => note.id}
        empty="No notes yet."
        columns={[
          { label: 'Note', render: (note) => note.text },
          { label: 'Channel', render: (note) => note.channel_label },
          {
            label: 'Call',
            render: (note) => (note.call_id ? <a href={`/calls/${note.call_id}`}>{note.call_id}</a> : '—'),
          },
          { label: 'Written', render: (note) => when(note.created_at) },
        ]}
      />
    </section>
  );
}
