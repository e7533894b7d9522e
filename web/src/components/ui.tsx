import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { useInfiniteQuery } from '@tanstack/preact-query';
import { ApiError, messageOf } from '../api/client';
import type { Page, PagedList } from '../api/queries/paged';

export function Loading({ what = 'Loading…' }: { what?: string }) {
  return (
    <p class="state" role="status" aria-live="polite">
      {what}
    </p>
  );
}

export function ErrorState({ error, retry }: { error: unknown; retry?: () => void }) {
  const status = error instanceof ApiError ? error.status : undefined;
  return (
    <div class="state error" role="alert">
      <p>
        {status === 403
          ? 'You do not have access to this.'
          : status === 404
            ? 'Not found.'
            : `Could not load: ${messageOf(error)}`}
      </p>
      {retry && (
        <button type="button" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

/** The form-wide message of a failed write (the field messages show next to their fields). */
export function FormError({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="form-error" role="alert">
      {messageOf(error)}
    </p>
  );
}

/** 422 messages about a list as a whole (`knowledge_base_ids`: an unknown base, a repeated one). */
export function FieldMessages({ error, name }: { error: unknown; name: string }) {
  const messages = error instanceof ApiError ? error.fieldMessages(name) : [];
  if (messages.length === 0) return null;
  return <small class="field-error">{messages.join(' ')}</small>;
}

let fieldIds = 0;

interface FieldProps {
  label: string;
  name: string;
  error?: unknown;
  hint?: string;
  /** Show the messages about the field's parts too (a list's items). */
  nested?: boolean;
  children: (props: { id: string; 'aria-invalid'?: boolean; 'aria-describedby'?: string }) => JSX.Element;
}

/** A labelled control with the API's 422 messages about `name` under it. */
export function Field({ label, name, error, hint, nested, children }: FieldProps) {
  const id = `f-${name.replace(/[^a-z0-9]/gi, '-')}-${(fieldIds += 1)}`;
  const messages = error instanceof ApiError ? error.fieldMessages(name, nested) : [];
  const describedBy = [hint ? `${id}-hint` : '', messages.length > 0 ? `${id}-error` : '']
    .filter(Boolean)
    .join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children({
        id,
        'aria-invalid': messages.length > 0 || undefined,
        'aria-describedby': describedBy || undefined,
      })}
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
      {messages.length > 0 && (
        <small id={`${id}-error`} class="field-error">
          {messages.join(' ')}
        </small>
      )}
    </div>
  );
}

export interface Column<T> {
  label: string;
  render: (item: T) => ComponentChildren;
}

interface PagedTableProps<T> extends PagedList<T> {
  columns: Column<NoInfer<T>>[];
  empty: string;
  caption: string;
  rowKey: (item: NoInfer<T>) => string;
  refetchInterval?: number | false;
}

/** A list that pages with `next_cursor` ("Load more"), with its loading, empty and error states. */
export function PagedTable<T>(props: PagedTableProps<T>) {
  const query = useInfiniteQuery({
    queryKey: props.queryKey,
    queryFn: ({ pageParam }) => props.fetchPage(pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last: Page<T>) => last.next_cursor ?? undefined,
    refetchInterval: props.refetchInterval,
  });
  if (query.isPending) return <Loading />;
  if (query.isError) return <ErrorState error={query.error} retry={() => void query.refetch()} />;
  const items = query.data.pages.flatMap((page) => page.items);
  if (items.length === 0) return <Empty>{props.empty}</Empty>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th scope="col" key={column.label}>
                {column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <tr key={props.rowKey(item)}>
              {props.columns.map((column) => (
                <td key={column.label} data-label={column.label}>
                  {column.render(item)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {query.hasNextPage && (
        <button type="button" onClick={() => void query.fetchNextPage()} disabled={query.isFetchingNextPage}>
          {query.isFetchingNextPage ? 'Loading…' : 'Load more'}
        </button>
      )}
    </div>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <header class="page-header">
      <h1>{title}</h1>
      {children && <div class="actions">{children}</div>}
    </header>
  );
}

export const when = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—';

/** A create form's buttons: submit (disabled while it is sent) and Cancel. */
export function FormActions({
  submit,
  pending,
  onCancel,
}: {
  submit: string;
  pending: boolean;
  onCancel: () => void;
}) {
  return (
    <div class="buttons">
      <button type="submit" class="primary" disabled={pending}>
        {submit}
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

/** A list page's header with its "New …" button, shown to those who may write while no form is open. */
export function ListPageHeader(props: {
  title: string;
  newLabel: string;
  canWrite: boolean;
  creating: boolean;
  onNew: () => void;
}) {
  return (
    <PageHeader title={props.title}>
      {props.canWrite && !props.creating && (
        <button type="button" class="primary" onClick={props.onNew}>
          {props.newLabel}
        </button>
      )}
    </PageHeader>
  );
}

/**
 * A list page: its header with the "New …" button (for those who may write), the create form while it
 * is open (`form` gets the function that closes it), then the paged list.
 */
export function ListPage<T>({
  title,
  newLabel,
  canWrite,
  form,
  ...table
}: {
  title: string;
  newLabel: string;
  canWrite: boolean;
  form: (close: () => void) => ComponentChildren;
} & PagedTableProps<T>) {
  const [creating, setCreating] = useState(false);
  return (
    <section>
      <ListPageHeader
        title={title}
        newLabel={newLabel}
        canWrite={canWrite}
        creating={creating}
        onNew={() => setCreating(true)}
      />
      {creating && form(() => setCreating(false))}
      <PagedTable {...table} />
    </section>
  );
}

export interface StatusAction<S extends string> {
  label: string;
  to: S;
  /** Whether the move is offered from the resource's current status. */
  shown: boolean;
  kind?: 'primary' | 'danger';
}

/** A page's buttons that move its resource to another status, disabled while one move is sent. */
export function StatusButtons<S extends string>(props: {
  actions: StatusAction<S>[];
  pending: boolean;
  onChange: (to: S) => void;
}) {
  return (
    <>
      {props.actions
        .filter((action) => action.shown)
        .map((action) => (
          <button
            key={action.label}
            type="button"
            class={action.kind}
            onClick={() => props.onChange(action.to)}
            disabled={props.pending}
          >
            {action.label}
          </button>
        ))}
    </>
  );
}
