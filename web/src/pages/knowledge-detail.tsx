import { useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRoute } from 'preact-iso';
import { api, ApiError, messageOf, ok } from '../api/client';
import { knowledgeBaseQueries } from '../api/queries/knowledge-bases';
import type { paths } from '../api/schema';
import { readCsv } from '../components/csv';
import { ImportProgressView, uploadFile, type ImportJob } from '../components/import-progress';
import {
  Empty,
  ErrorState,
  Field,
  FormActions,
  FormError,
  Loading,
  PageHeader,
  PagedTable,
  when,
} from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

type ListingStatus = 'available' | 'under_offer' | 'sold';

/** The document types the API's worker reads, by file extension (when the browser gives no type). */
const DOCUMENT_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  txt: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
};

const LISTING_COLUMNS = [
  'external_id',
  'address',
  'suburb',
  'state',
  'postcode',
  'price_text',
  'status',
  'bedrooms',
  'bathrooms',
  'description',
];

function useItemsChanged(kb_id: string) {
  const workspace_id = useWorkspaceId();
  const queries = useQueryClient();
  return () => {
    void queries.invalidateQueries({ queryKey: knowledgeBaseQueries.items(workspace_id, kb_id).queryKey });
    void queries.invalidateQueries({ queryKey: knowledgeBaseQueries.detail(workspace_id, kb_id).queryKey });
  };
}

type ItemBody = NonNullable<
  paths['/api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id}/items']['post']['requestBody']
>['content']['application/json'];

function createItem(workspace_id: string, kb_id: string, body: ItemBody) {
  return ok(
    api().POST('/api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id}/items', {
      params: { path: { workspace_id, kb_id } },
      body,
    }),
  );
}

function Search({ kb_id }: { kb_id: string }) {
  const workspace_id = useWorkspaceId();
  const [text, setText] = useState('');
  const [asked, setAsked] = useState<{ q: string; at: number }>();
  const results = useQuery(knowledgeBaseQueries.search(workspace_id, kb_id, asked));
  return (
    <section class="card" aria-label="Search">
      <h2>Search</h2>
      <form
        class="row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setAsked({ q: text, at: Date.now() });
        }}
      >
        <Field label="Search this knowledge base" name="q" error={results.error}>
          {(p) => <input {...p} type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} />}
        </Field>
        <button type="submit">Search</button>
      </form>
      {asked &&
        (results.isPending ? (
          <Loading what="Searching…" />
        ) : results.isError ? (
          results.error instanceof ApiError && results.error.status === 422 ? null : (
            <ErrorState error={results.error} />
          )
        ) : results.data.items.length === 0 ? (
          <Empty>Nothing matches “{asked.q}”.</Empty>
        ) : (
          <ol class="results" aria-label="Search results">
            {results.data.items.map((hit) => (
              <li key={hit.id}>
                <strong>{hit.title}</strong>
                {hit.listing && (
                  <span class="muted">
                    {' '}
                    · {hit.listing.price_text ?? 'no price'} · {hit.listing.status}
                  </span>
                )}
                <p>{hit.passage}</p>
              </li>
            ))}
          </ol>
        ))}
    </section>
  );
}

function AddListing({ kb_id, onDone }: { kb_id: string; onDone: () => void }) {
  const workspace_id = useWorkspaceId();
  const changed = useItemsChanged(kb_id);
  const [listing, setListing] = useState<Record<string, string>>({ status: 'available' });
  const set = (name: string) => (e: { currentTarget: { value: string } }) =>
    setListing((current) => ({ ...current, [name]: e.currentTarget.value }));
  const create = useMutation({
    mutationFn: () => createItem(workspace_id, kb_id, listingBody(listing)),
    onSuccess: () => {
      changed();
      onDone();
    },
  });
  const text = (label: string, name: string, type = 'text') => (
    <Field label={label} name={name} error={create.error}>
      {(p) => <input {...p} type={type} value={listing[name] ?? ''} onInput={set(name)} />}
    </Field>
  );
  return (
    <form
      class="card"
      aria-label="New listing"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <div class="grid">
        {text('Address', 'address')}
        {text('Suburb', 'suburb')}
        {text('State', 'state')}
        {text('Postcode', 'postcode')}
        {text('Price', 'price_text')}
        <Field label="Listing status" name="status" error={create.error}>
          {(p) => (
            <select {...p} value={listing.status} onChange={set('status')}>
              <option value="available">Available</option>
              <option value="under_offer">Under offer</option>
              <option value="sold">Sold</option>
            </select>
          )}
        </Field>
        {text('Bedrooms', 'bedrooms', 'number')}
        {text('Bathrooms', 'bathrooms', 'number')}
        {text('External id', 'external_id')}
      </div>
      <Field label="Description" name="description" error={create.error}>
        {(p) => <textarea {...p} rows={3} value={listing.description ?? ''} onInput={set('description')} />}
      </Field>
      <FormError error={create.error} />
      <FormActions submit="Save listing" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}

/** A listing's body from form or CSV values: empty fields left out, counts as numbers. */
function listingBody(values: Record<string, string>): ItemBody {
  const body: Record<string, unknown> = {};
  for (const name of LISTING_COLUMNS) {
    const value = values[name]?.trim();
    if (!value) continue;
    body[name] = name === 'bedrooms' || name === 'bathrooms' ? Number(value) : value;
  }
  body.status = (body.status as ListingStatus | undefined) ?? 'available';
  // The API checks the row (a missing address is its 422, shown as the row's reason).
  return body as ItemBody;
}

/** Why the API refused a row: its 422 messages with their fields, or its error. */
function reasonOf(error: unknown): string {
  if (error instanceof ApiError && error.detail.length > 0)
    return error.detail
      .map((issue) => `${issue.loc.filter((part) => part !== 'body').join('.')}: ${issue.msg}`)
      .join('; ');
  return messageOf(error);
}

/**
 * A listings CSV (a header row with the listing's field names): each row is added through the items
 * route, the progress shown as it goes, and the rows the API refused listed with its reason.
 */
function UploadListings({ kb_id }: { kb_id: string }) {
  const workspace_id = useWorkspaceId();
  const changed = useItemsChanged(kb_id);
  const [file, setFile] = useState<File>();
  const [job, setJob] = useState<ImportJob>();
  const run = useMutation({
    mutationFn: async () => {
      if (!file) throw new Error('Choose a CSV file.');
      const rows = readCsv(await file.text());
      if (rows.length === 0) throw new Error('The file has no listing rows under its header.');
      const state: ImportJob = {
        status: 'processing',
        progress: { done: 0, total: rows.length },
        counts: { total: rows.length, created: 0, rejected: 0 },
        failure_reason: null,
        errors: [],
      };
      setJob(state);
      for (const row of rows) {
        try {
          await createItem(workspace_id, kb_id, listingBody(row.values));
          state.counts.created += 1;
        } catch (error) {
          if (!(error instanceof ApiError) || error.status >= 500 || error.status === 401) throw error;
          state.counts.rejected += 1;
          state.errors?.push({ row: row.line, reason: reasonOf(error) });
        }
        state.progress.done += 1;
        setJob({ ...state, progress: { ...state.progress }, counts: { ...state.counts } });
      }
      setJob({ ...state, status: 'completed' });
    },
    onError: (error) =>
      setJob((current) => current && { ...current, status: 'failed', failure_reason: messageOf(error) }),
    onSettled: changed,
  });
  return (
    <section class="card" aria-label="Upload listings">
      <h2>Upload listings</h2>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          run.mutate();
        }}
      >
        <label>
          Listings CSV
          <input type="file" accept=".csv,text/csv" onChange={(e) => setFile(e.currentTarget.files?.[0])} />
        </label>
        <button type="submit" class="primary" disabled={!file || run.isPending}>
          Upload listings
        </button>
      </form>
      <small class="hint">Columns: {LISTING_COLUMNS.join(', ')} (status defaults to available).</small>
      {!job && <FormError error={run.error} />}
      {job && <ImportProgressView job={job} />}
    </section>
  );
}

function AddDocument({ kb_id, onDone }: { kb_id: string; onDone: () => void }) {
  const workspace_id = useWorkspaceId();
  const changed = useItemsChanged(kb_id);
  const [title, setTitle] = useState('');
  const [text, setText] = useState('');
  const [file, setFile] = useState<File>();
  const create = useMutation({
    mutationFn: async () => {
      if (!file) return createItem(workspace_id, kb_id, { title, text });
      const extension = file.name.split('.').pop()?.toLowerCase() ?? '';
      const content_type = file.type || DOCUMENT_TYPES[extension] || 'application/octet-stream';
      const item = await createItem(workspace_id, kb_id, { title, file_name: file.name, content_type });
      if (!item.upload_url) throw new Error('The document has no upload URL.');
      await uploadFile(item.upload_url, file);
      return item;
    },
    onSuccess: () => {
      changed();
      onDone();
    },
  });
  return (
    <form
      class="card"
      aria-label="New document"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <Field label="Title" name="title" error={create.error}>
        {(p) => <input {...p} value={title} onInput={(e) => setTitle(e.currentTarget.value)} required />}
      </Field>
      <Field
        label="Document file"
        name="content_type"
        error={create.error}
        hint="PDF, DOCX, TXT or Markdown; or leave it empty and write the text below."
      >
        {(p) => (
          <input
            {...p}
            type="file"
            accept=".pdf,.docx,.txt,.md,.markdown"
            onChange={(e) => setFile(e.currentTarget.files?.[0])}
          />
        )}
      </Field>
      <Field label="Text" name="text" error={create.error}>
        {(p) => (
          <textarea
            {...p}
            rows={5}
            value={text}
            disabled={file !== undefined}
            onInput={(e) => setText(e.currentTarget.value)}
          />
        )}
      </Field>
      <FormError error={create.error} />
      <FormActions submit="Save document" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}

export default function KnowledgeDetail() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const kb_id = useRoute().params.id;
  const [adding, setAdding] = useState(false);
  const base = useQuery(knowledgeBaseQueries.detail(workspace_id, kb_id));
  if (base.isPending) return <Loading />;
  if (base.isError) return <ErrorState error={base.error} retry={() => void base.refetch()} />;
  const kb = base.data;
  const listings = kb.kind === 'listings';
  const writable = canWrite && kb.integration_id === null;
  return (
    <section>
      <PageHeader title={kb.name}>
        {writable && !adding && (
          <button type="button" class="primary" onClick={() => setAdding(true)}>
            {listings ? 'Add listing' : 'Add document'}
          </button>
        )}
      </PageHeader>
      <p class="muted">
        {listings ? 'Listings' : 'Documents'} · {kb.item_count} items
        {kb.integration_id && (
          <>
            {' '}
            · synced from <a href={`/integrations/${kb.integration_id}`}>an integration</a>
          </>
        )}
      </p>
      {adding &&
        (listings ? (
          <AddListing kb_id={kb_id} onDone={() => setAdding(false)} />
        ) : (
          <AddDocument kb_id={kb_id} onDone={() => setAdding(false)} />
        ))}
      {writable && listings && <UploadListings kb_id={kb_id} />}
      <Search kb_id={kb_id} />
      <h2>{listings ? 'Listings' : 'Documents'}</h2>
      <PagedTable
        caption={listings ? 'Listings' : 'Documents'}
        {...knowledgeBaseQueries.items(workspace_id, kb_id)}
        rowKey={(item) => item.id}
        empty={listings ? 'No listings yet.' : 'No documents yet.'}
        refetchInterval={listings ? false : 2000}
        columns={
          listings
            ? [
                { label: 'Address', render: (item) => item.full_address ?? item.address },
                { label: 'Price', render: (item) => item.price_text ?? '—' },
                {
                  label: 'Status',
                  render: (item) => <span class={`badge ${item.status}`}>{item.status}</span>,
                },
                {
                  label: 'Beds / baths',
                  render: (item) => `${item.bedrooms ?? '—'} / ${item.bathrooms ?? '—'}`,
                },
                { label: 'External id', render: (item) => item.external_id ?? '—' },
              ]
            : [
                { label: 'Title', render: (item) => item.title },
                { label: 'File', render: (item) => item.file_name ?? '—' },
                {
                  label: 'Status',
                  render: (item) => (
                    <span class={`badge ${item.status}`}>
                      {item.status}
                      {item.failure_reason ? `: ${item.failure_reason}` : ''}
                    </span>
                  ),
                },
                { label: 'Passages', render: (item) => item.chunks ?? '—' },
                { label: 'Added', render: (item) => when(item.created_at) },
              ]
        }
      />
    </section>
  );
}
