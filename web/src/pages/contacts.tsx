import { useState } from 'preact/hooks';
import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { api, ok } from '../api/client';
import { ImportProgress, uploadFile } from '../components/import-progress';
import { Field, FormError, PageHeader, PagedTable, when, FormActions } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

type Contactability = 'contactable' | 'do_not_contact' | 'unsubscribed';

function ImportContacts() {
  const workspace_id = useWorkspaceId();
  const queries = useQueryClient();
  const [file, setFile] = useState<File>();
  const [jobId, setJobId] = useState<string>();
  const run = useMutation({
    mutationFn: async () => {
      if (!file) throw new Error('Choose a CSV or vCard file.');
      const format = /\.vcf$/i.test(file.name) ? 'vcf' : 'csv';
      const job = await ok(
        api().POST('/api/v1/workspaces/{workspace_id}/contacts/imports', {
          params: { path: { workspace_id } },
          body: { format, file_name: file.name },
        }),
      );
      if (!job.upload_url) throw new Error('The import job has no upload URL.');
      await uploadFile(job.upload_url, file);
      await ok(
        api().POST('/api/v1/workspaces/{workspace_id}/contacts/imports/{job_id}/start', {
          params: { path: { workspace_id, job_id: job.job_id } },
        }),
      );
      return job.job_id;
    },
    onSuccess: (id) => {
      setJobId(id);
      void queries.invalidateQueries({ queryKey: ['contacts', workspace_id] });
    },
  });
  return (
    <section class="card" aria-label="Import contacts">
      <h2>Import contacts</h2>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          run.mutate();
        }}
      >
        <label>
          CSV or vCard file
          <input
            type="file"
            accept=".csv,.vcf,text/csv,text/vcard"
            onChange={(e) => setFile(e.currentTarget.files?.[0])}
          />
        </label>
        <button type="submit" class="primary" disabled={!file || run.isPending}>
          Import
        </button>
      </form>
      <FormError error={run.error} />
      {jobId && (
        <ImportProgress
          queryKey={['import', workspace_id, jobId]}
          load={() =>
            ok(
              api().GET('/api/v1/workspaces/{workspace_id}/contacts/imports/{job_id}', {
                params: { path: { workspace_id, job_id: jobId } },
              }),
            )
          }
        />
      )}
    </section>
  );
}

function NewContact({ onDone }: { onDone: () => void }) {
  const workspace_id = useWorkspaceId();
  const queries = useQueryClient();
  const [first, setFirst] = useState('');
  const [last, setLast] = useState('');
  const [phone, setPhone] = useState('');
  const [email, setEmail] = useState('');
  const create = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/contacts', {
          params: { path: { workspace_id } },
          body: { first_name: first, last_name: last, phone: phone || undefined, email: email || undefined },
        }),
      ),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ['contacts', workspace_id] });
      onDone();
    },
  });
  return (
    <form
      class="card grid"
      aria-label="New contact"
      onSubmit={(event) => {
        event.preventDefault();
        create.mutate();
      }}
    >
      <Field label="First name" name="first_name" error={create.error}>
        {(p) => <input {...p} value={first} onInput={(e) => setFirst(e.currentTarget.value)} />}
      </Field>
      <Field label="Last name" name="last_name" error={create.error}>
        {(p) => <input {...p} value={last} onInput={(e) => setLast(e.currentTarget.value)} />}
      </Field>
      <Field label="Phone" name="phone" error={create.error}>
        {(p) => <input {...p} type="tel" value={phone} onInput={(e) => setPhone(e.currentTarget.value)} />}
      </Field>
      <Field label="Email" name="email" error={create.error}>
        {(p) => <input {...p} type="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
      </Field>
      <FormError error={create.error} />
      <FormActions submit="Save contact" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}

function Suppression() {
  const { organisation } = useSession();
  return (
    <details class="card">
      <summary>Suppression list</summary>
      <PagedTable
        caption="Suppression list"
        queryKey={['suppression', organisation.organisation_id]}
        rowKey={(entry) => entry.phone}
        empty="No suppressed numbers."
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/organisations/{organisation_id}/suppression-list', {
              params: { path: { organisation_id: organisation.organisation_id }, query: { cursor } },
            }),
          )
        }
        columns={[
          { label: 'Phone', render: (entry) => entry.phone },
          { label: 'Since', render: (entry) => when(entry.created_at) },
        ]}
      />
    </details>
  );
}

export default function Contacts() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const [q, setQ] = useState('');
  const [contactability, setContactability] = useState<Contactability | ''>('');
  const [adding, setAdding] = useState(false);
  return (
    <section>
      <PageHeader title="Contacts">
        {canWrite && !adding && (
          <button type="button" class="primary" onClick={() => setAdding(true)}>
            New contact
          </button>
        )}
      </PageHeader>
      {adding && <NewContact onDone={() => setAdding(false)} />}
      {canWrite && <ImportContacts />}
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search contacts
          <input type="search" value={q} onChange={(e) => setQ(e.currentTarget.value)} />
        </label>
        <label>
          Contactability
          <select
            value={contactability}
            onChange={(e) => setContactability(e.currentTarget.value as Contactability | '')}
          >
            <option value="">Any</option>
            <option value="contactable">Contactable</option>
            <option value="do_not_contact">Do not contact</option>
            <option value="unsubscribed">Unsubscribed</option>
          </select>
        </label>
      </form>
      <PagedTable
        caption="Contacts"
        queryKey={['contacts', workspace_id, q, contactability]}
        rowKey={(contact) => contact.id}
        empty="No contacts match."
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/contacts', {
              params: {
                path: { workspace_id },
                query: { cursor, q: q || undefined, contactability: contactability || undefined },
              },
            }),
          )
        }
        columns={[
          {
            label: 'Name',
            render: (c) => (
              <a href={`/contacts/${c.id}`}>
                {`${c.first_name} ${c.last_name}`.trim() || c.phone || c.email || c.id}
              </a>
            ),
          },
          { label: 'Phone', render: (c) => c.phone ?? '—' },
          { label: 'Email', render: (c) => c.email ?? '—' },
          { label: 'Tags', render: (c) => c.tags.join(', ') },
          { label: 'Contactability', render: (c) => c.contactability },
        ]}
      />
      <Suppression />
    </section>
  );
}
