import { useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api/client';
import {
  ErrorState,
  Field,
  FormActions,
  FormError,
  Loading,
  PageHeader,
  PagedTable,
  when,
} from '../components/ui';
import { phoneNumberQueries } from '../api/queries/phone-numbers';
import { partLimit, segmentsOf } from '../components/sms-segments';
import { useSession, useWorkspaceId } from '../session';

type Audience = 'all' | 'tag' | 'contact_ids';

/** A live count of the message's characters and segments, by the rule the API charges by. */
export function SegmentCounter({ text, id }: { text: string; id?: string }) {
  const s = segmentsOf(text);
  return (
    <small id={id} class="hint segment-counter" aria-live="polite" data-testid="segment-counter">
      {s.characters} character{s.characters === 1 ? '' : 's'} · {s.segments} segment
      {s.segments === 1 ? '' : 's'} ({s.encoding}, {partLimit(s)} a {s.segments > 1 ? 'part' : 'message'})
    </small>
  );
}

const contactName = (c: { first_name: string; last_name: string }) =>
  `${c.first_name} ${c.last_name}`.trim() || 'Unnamed';

/** Finds a contact by name or number and puts its phone in the To box. */
function ContactPicker({ onPick }: { onPick: (phone: string) => void }) {
  const workspace_id = useWorkspaceId();
  const [q, setQ] = useState('');
  const search = useQuery({
    queryKey: ['sms-contact-picker', workspace_id, q],
    enabled: q.trim().length >= 2,
    queryFn: () =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/contacts', {
          params: { path: { workspace_id }, query: { q: q.trim(), limit: 8, contactability: 'contactable' } },
        }),
      ),
  });
  const found = (search.data?.items ?? []).filter((c) => c.phone);
  return (
    <div class="field contact-picker">
      <label for="sms-contact-search">Find a contact</label>
      <input
        id="sms-contact-search"
        type="search"
        value={q}
        placeholder="Name or number"
        onInput={(e) => setQ(e.currentTarget.value)}
      />
      {q.trim().length >= 2 && search.data && (
        <ul class="picker-results" aria-label="Matching contacts">
          {found.length === 0 && <li class="hint">No contactable contact with a phone matches.</li>}
          {found.map((c) => (
            <li key={c.id}>
              <button
                type="button"
                class="link"
                onClick={() => {
                  onPick(c.phone ?? '');
                  setQ('');
                }}
              >
                {contactName(c)} · {c.phone}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function SendSms() {
  const workspace_id = useWorkspaceId();
  const queries = useQueryClient();
  const [to, setTo] = useState('');
  const [from, setFrom] = useState('');
  const [body, setBody] = useState('');
  const numbers = useQuery(phoneNumberQueries.all(workspace_id));
  const send = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/sms', {
          params: { path: { workspace_id } },
          body: { to_phone: to, body, ...(from ? { from_phone: from } : {}) },
        }),
      ),
    onSuccess: () => {
      setBody('');
      void queries.invalidateQueries({ queryKey: ['sms-inbox', workspace_id] });
    },
  });
  return (
    <form
      class="card"
      aria-label="Send an SMS"
      onSubmit={(e) => {
        e.preventDefault();
        send.mutate();
      }}
    >
      <ContactPicker onPick={setTo} />
      <Field label="To phone" name="to_phone" error={send.error}>
        {(p) => <input {...p} type="tel" value={to} onInput={(e) => setTo(e.currentTarget.value)} required />}
      </Field>
      <Field label="From number" name="from_phone" error={send.error}>
        {(p) => (
          <select {...p} value={from} onChange={(e) => setFrom(e.currentTarget.value)}>
            <option value="">The workspace's default number</option>
            {(numbers.data?.items ?? []).map((n) => (
              <option key={n.id} value={n.phone_number}>
                {n.phone_number}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Message" name="body" error={send.error}>
        {(p) => (
          <>
            <textarea
              {...p}
              aria-describedby={[p['aria-describedby'], 'sms-segments'].filter(Boolean).join(' ')}
              rows={3}
              value={body}
              onInput={(e) => setBody(e.currentTarget.value)}
              required
            />
            <SegmentCounter text={body} id="sms-segments" />
          </>
        )}
      </Field>
      <FormError error={send.error} />
      {send.isSuccess && (
        <p role="status">
          Sent ({send.data.segments} segment{send.data.segments === 1 ? '' : 's'}, {send.data.credits}{' '}
          credits).
        </p>
      )}
      <button type="submit" class="primary" disabled={send.isPending}>
        Send
      </button>
    </form>
  );
}

function NewSmsCampaign({ onDone }: { onDone: () => void }) {
  const workspace_id = useWorkspaceId();
  const { route } = useLocation();
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const [body, setBody] = useState('');
  const [audience, setAudience] = useState<Audience>('all');
  const [tag, setTag] = useState('');
  const [contactIds, setContactIds] = useState('');
  const create = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/sms-campaigns', {
          params: { path: { workspace_id } },
          body: {
            name,
            body,
            audience:
              audience === 'all'
                ? { all: true }
                : audience === 'tag'
                  ? { tag }
                  : { contact_ids: contactIds.split(/[\s,]+/).filter(Boolean) },
          },
        }),
      ),
    onSuccess: (campaign) => {
      void queries.invalidateQueries({ queryKey: ['sms-campaigns', workspace_id] });
      onDone();
      route(`/sms/campaigns/${campaign.id}`);
    },
  });
  return (
    <form
      class="card"
      aria-label="New SMS campaign"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <Field label="Campaign name" name="name" error={create.error}>
        {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} required />}
      </Field>
      <Field
        label="Campaign message"
        name="body"
        error={create.error}
        hint="Placeholders: {{first_name}}, {{last_name}}, {{name}}, {{phone}}, {{email}} and contact attributes."
      >
        {(p) => (
          <>
            <textarea {...p} rows={3} value={body} onInput={(e) => setBody(e.currentTarget.value)} required />
            <SegmentCounter text={body} />
          </>
        )}
      </Field>
      <Field label="Audience" name="audience" error={create.error}>
        {(p) => (
          <select {...p} value={audience} onChange={(e) => setAudience(e.currentTarget.value as Audience)}>
            <option value="all">Every contactable contact</option>
            <option value="tag">Contacts with a tag</option>
            <option value="contact_ids">Chosen contacts</option>
          </select>
        )}
      </Field>
      {audience === 'tag' && (
        <Field label="Tag" name="audience.tag" error={create.error}>
          {(p) => <input {...p} value={tag} onInput={(e) => setTag(e.currentTarget.value)} required />}
        </Field>
      )}
      {audience === 'contact_ids' && (
        <Field
          label="Contact ids"
          name="audience.contact_ids"
          error={create.error}
          nested
          hint="ct_… ids, comma or space separated."
        >
          {(p) => (
            <textarea
              {...p}
              rows={2}
              value={contactIds}
              onInput={(e) => setContactIds(e.currentTarget.value)}
            />
          )}
        </Field>
      )}
      <FormError error={create.error} />
      <FormActions submit="Create SMS campaign" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}

const rate = (value: number) => `${Math.round(value * 1000) / 10} %`;

function Comparison({ ids }: { ids: string[] }) {
  const workspace_id = useWorkspaceId();
  const compared = useQuery({
    queryKey: ['sms-compare', workspace_id, ids],
    queryFn: () =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/sms-campaigns/compare', {
          params: { path: { workspace_id }, query: { ids: ids.join(',') } },
        }),
      ),
  });
  if (compared.isPending) return <Loading what="Comparing…" />;
  if (compared.isError) return <ErrorState error={compared.error} retry={() => void compared.refetch()} />;
  return (
    <div class="table-wrap">
      <table aria-label="Campaign comparison">
        <thead>
          <tr>
            {[
              'Campaign',
              'Sent',
              'Delivered',
              'Failed',
              'Replies',
              'Opt-outs',
              'Credits',
              'Delivery',
              'Replied',
              'Opted out',
            ].map((label) => (
              <th scope="col" key={label}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {compared.data.items.map((c) => (
            <tr key={c.id}>
              <td data-label="Campaign">{c.name}</td>
              <td data-label="Sent">{c.sent}</td>
              <td data-label="Delivered">{c.delivered}</td>
              <td data-label="Failed">{c.failed}</td>
              <td data-label="Replies">{c.replies}</td>
              <td data-label="Opt-outs">{c.opt_outs}</td>
              <td data-label="Credits">{c.credits}</td>
              <td data-label="Delivery">{rate(c.delivery_rate)}</td>
              <td data-label="Replied">{rate(c.reply_rate)}</td>
              <td data-label="Opted out">{rate(c.opt_out_rate)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function SmsCampaigns() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const [creating, setCreating] = useState(false);
  const [chosen, setChosen] = useState<string[]>([]);
  const [compared, setCompared] = useState<string[]>();
  const choose = (id: string, on: boolean) =>
    setChosen((current) => (on ? [...current, id] : current.filter((c) => c !== id)));
  return (
    <section aria-labelledby="sms-campaigns">
      <div class="page-header">
        <h2 id="sms-campaigns">SMS campaigns</h2>
        <div class="actions">
          <button
            type="button"
            onClick={() => setCompared(chosen)}
            disabled={chosen.length < 2 || chosen.length > 5}
          >
            Compare selected ({chosen.length})
          </button>
          {canWrite && !creating && (
            <button type="button" class="primary" onClick={() => setCreating(true)}>
              New SMS campaign
            </button>
          )}
        </div>
      </div>
      {creating && <NewSmsCampaign onDone={() => setCreating(false)} />}
      <PagedTable
        caption="SMS campaigns"
        queryKey={['sms-campaigns', workspace_id]}
        rowKey={(c) => c.id}
        empty="No SMS campaigns yet."
        refetchInterval={5000}
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/sms-campaigns', {
              params: { path: { workspace_id }, query: { cursor } },
            }),
          )
        }
        columns={[
          {
            label: 'Compare',
            render: (c) => (
              <input
                type="checkbox"
                aria-label={`Compare ${c.name}`}
                checked={chosen.includes(c.id)}
                onChange={(e) => choose(c.id, e.currentTarget.checked)}
              />
            ),
          },
          { label: 'Name', render: (c) => <a href={`/sms/campaigns/${c.id}`}>{c.name}</a> },
          { label: 'Status', render: (c) => <span class={`badge ${c.status}`}>{c.status}</span> },
          { label: 'Sent', render: (c) => `${c.sent} / ${c.recipients}` },
          { label: 'Replies', render: (c) => c.replies },
        ]}
      />
      <p class="hint">Tick 2 to 5 campaigns to compare them.</p>
      {compared && <Comparison ids={compared} />}
    </section>
  );
}

export default function Sms() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  return (
    <section>
      <PageHeader title="SMS" />
      {canWrite && <SendSms />}
      <h2>Inbox</h2>
      <PagedTable
        caption="SMS threads"
        queryKey={['sms-inbox', workspace_id]}
        rowKey={(t) => t.id}
        empty="No conversations yet."
        refetchInterval={5000}
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/sms-inbox', {
              params: { path: { workspace_id }, query: { cursor } },
            }),
          )
        }
        columns={[
          {
            label: 'Phone',
            render: (t) => <a href={`/sms/threads/${t.contact_id}`}>{t.phone ?? t.contact_id}</a>,
          },
          { label: 'Last message', render: (t) => t.last_message ?? '—' },
          { label: 'When', render: (t) => when(t.last_message_at) },
          { label: 'Unread', render: (t) => (t.unread > 0 ? t.unread : '') },
        ]}
      />
      <SmsCampaigns />
    </section>
  );
}
