import { useEffect, useState } from 'preact/hooks';
import { useQuery } from '@tanstack/preact-query';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api/client';
import { agentQueries } from '../api/queries/agents';
import { campaignQueries } from '../api/queries/campaigns';
import {
  ANSWERED_BY_LABELS,
  CHANNEL_LABELS,
  END_REASON_LABELS,
  endReasonLabel,
  type EndReason,
} from '../components/call-labels';
import { PageHeader, PagedTable, when } from '../components/ui';
import { useWorkspaceId } from '../session';

type Status = 'created' | 'initiated' | 'connected' | 'inprogress' | 'completed' | 'failed';
type AnsweredBy = keyof typeof ANSWERED_BY_LABELS;
type Channel = keyof typeof CHANNEL_LABELS;

/** The list's filters: all of them kept in the page's URL, so a filtered list can be saved or shared. */
interface Filters {
  status: Status | '';
  agent_id: string;
  direction: 'outbound' | 'inbound' | '';
  from: string;
  to: string;
  phone: string;
  campaign_id: string;
  end_reason: EndReason | '';
  channel: Channel | '';
  answered_by: AnsweredBy | '';
  agent_version: string;
  handed_off: 'true' | 'false' | '';
}

const FILTER_NAMES = [
  'status',
  'agent_id',
  'direction',
  'from',
  'to',
  'phone',
  'campaign_id',
  'end_reason',
  'channel',
  'answered_by',
  'agent_version',
  'handed_off',
] as const satisfies readonly (keyof Filters)[];

const oneOf = <T extends string>(value: string | undefined, allowed: readonly T[]): T | '' =>
  allowed.includes(value as T) ? (value as T) : '';

/** The filters the URL's query names (anything it does not know is left out). */
function filtersOf(query: Record<string, string | undefined>): Filters {
  return {
    status: oneOf(query.status, ['created', 'initiated', 'connected', 'inprogress', 'completed', 'failed']),
    agent_id: query.agent_id ?? '',
    direction: oneOf(query.direction, ['outbound', 'inbound']),
    from: /^\d{4}-\d{2}-\d{2}$/.test(query.from ?? '') ? (query.from as string) : '',
    to: /^\d{4}-\d{2}-\d{2}$/.test(query.to ?? '') ? (query.to as string) : '',
    phone: query.phone ?? '',
    campaign_id: query.campaign_id ?? '',
    end_reason: oneOf(query.end_reason, Object.keys(END_REASON_LABELS) as EndReason[]),
    channel: oneOf(query.channel, Object.keys(CHANNEL_LABELS) as Channel[]),
    answered_by: oneOf(query.answered_by, Object.keys(ANSWERED_BY_LABELS) as AnsweredBy[]),
    agent_version: /^[1-9]\d{0,9}$/.test(query.agent_version ?? '') ? (query.agent_version as string) : '',
    handed_off: oneOf(query.handed_off, ['true', 'false']),
  };
}

/** `/calls` with the filters that are set, as its query. */
const callsUrl = (filters: Filters): string => {
  const query = new URLSearchParams(
    FILTER_NAMES.flatMap((name) => (filters[name] ? [[name, filters[name]]] : [])),
  );
  const text = query.toString();
  return text ? `/calls?${text}` : '/calls';
};

const listCalls = (workspace_id: string, filters: Filters, cursor: string | undefined, limit = 50) =>
  ok(
    api().GET('/api/v1/workspaces/{workspace_id}/calls', {
      params: {
        path: { workspace_id },
        query: {
          cursor,
          limit,
          status: filters.status || undefined,
          agent_id: filters.agent_id || undefined,
          direction: filters.direction || undefined,
          phone: filters.phone.trim() || undefined,
          campaign_id: filters.campaign_id || undefined,
          end_reason: filters.end_reason || undefined,
          channel: filters.channel || undefined,
          answered_by: filters.answered_by || undefined,
          agent_version: filters.agent_version ? Number(filters.agent_version) : undefined,
          handed_off: filters.handed_off || undefined,
          from: filters.from ? new Date(filters.from).toISOString() : undefined,
          to: filters.to ? new Date(`${filters.to}T23:59:59`).toISOString() : undefined,
        },
      },
    }),
  );

type Call = Awaited<ReturnType<typeof listCalls>>['items'][number];

/** The other party: the caller of an inbound call, the called number of an outbound one. */
const otherParty = (call: Call) =>
  call.remote_phone ?? (call.channel === 'web' ? 'Test chat' : call.to_phone);

const SUCCESS = { true: 'Successful', false: 'Unsuccessful' } as const;

const csvCell = (value: unknown) => {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

/** Every call the filters select, as CSV, downloaded by the browser. */
async function exportCsv(workspace_id: string, filters: Filters): Promise<void> {
  const rows: Call[] = [];
  let cursor: string | undefined;
  do {
    const page = await listCalls(workspace_id, filters, cursor, 100);
    rows.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  const columns = [
    'id',
    'created_at',
    'agent_name',
    'direction',
    'remote_phone',
    'to_phone',
    'from_phone',
    'channel',
    'answered_by',
    'agent_version',
    'handoff_count',
    'active_agent_id',
    'status',
    'end_reason',
    'duration_seconds',
    'credits',
    'user_sentiment',
    'call_successful',
    'summary_line',
    'campaign_id',
  ] as const;
  const lines = [columns.join(','), ...rows.map((row) => columns.map((c) => csvCell(row[c])).join(','))];
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([`${lines.join('\n')}\n`], { type: 'text/csv' }));
  link.download = 'calls.csv';
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

export default function Calls() {
  const workspace_id = useWorkspaceId();
  const { query, route } = useLocation();
  const filters = filtersOf(query);
  const [phone, setPhone] = useState(filters.phone);
  useEffect(() => setPhone(filters.phone), [filters.phone]);
  const [exporting, setExporting] = useState(false);
  const agents = useQuery(agentQueries.all(workspace_id));
  const campaigns = useQuery(campaignQueries.all(workspace_id));
  // A filter changed: the URL says so (replacing the entry, so Back leaves the list).
  const set = (patch: Partial<Filters>) => {
    const next = { ...filters, ...patch };
    route(callsUrl(next), true);
  };
  /** An agent's name (its id when it is not found, e.g. deleted). */
  const agentName = (id: string) => agents.data?.items.find((a) => a.id === id)?.name ?? id;
  const filtered = FILTER_NAMES.some((name) => filters[name] !== '');
  return (
    <section class="calls-list">
      <PageHeader title="Calls">
        <button
          type="button"
          disabled={exporting}
          onClick={() => {
            setExporting(true);
            void exportCsv(workspace_id, filters).finally(() => setExporting(false));
          }}
        >
          {exporting ? 'Exporting…' : 'Export CSV'}
        </button>
      </PageHeader>
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          set({ phone });
        }}
      >
        <label>
          Status
          <select
            value={filters.status}
            onChange={(e) => set({ status: e.currentTarget.value as Status | '' })}
          >
            <option value="">Any</option>
            {['created', 'initiated', 'connected', 'inprogress', 'completed', 'failed'].map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Agent
          <select
            aria-label="Agent"
            value={filters.agent_id}
            onChange={(e) => set({ agent_id: e.currentTarget.value })}
          >
            <option value="">Any agent</option>
            {(agents.data?.items ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
            {filters.agent_id && agents.data && !agents.data.items.some((a) => a.id === filters.agent_id) && (
              <option value={filters.agent_id}>{filters.agent_id}</option>
            )}
          </select>
        </label>
        <label>
          Direction
          <select
            value={filters.direction}
            onChange={(e) => set({ direction: e.currentTarget.value as Filters['direction'] })}
          >
            <option value="">Any</option>
            <option value="outbound">Outbound</option>
            <option value="inbound">Inbound</option>
          </select>
        </label>
        <label>
          Campaign
          <select
            aria-label="Campaign"
            value={filters.campaign_id}
            onChange={(e) => set({ campaign_id: e.currentTarget.value })}
          >
            <option value="">Any (single calls too)</option>
            {(campaigns.data?.items ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          From date
          <input type="date" value={filters.from} onChange={(e) => set({ from: e.currentTarget.value })} />
        </label>
        <label>
          To date
          <input type="date" value={filters.to} onChange={(e) => set({ to: e.currentTarget.value })} />
        </label>
        <label>
          Phone
          <input
            aria-label="Phone"
            type="search"
            inputMode="tel"
            placeholder="+61…"
            value={phone}
            onInput={(e) => setPhone(e.currentTarget.value)}
            onChange={(e) => set({ phone: e.currentTarget.value })}
          />
        </label>
        <label>
          End reason
          <select
            value={filters.end_reason}
            onChange={(e) => set({ end_reason: e.currentTarget.value as Filters['end_reason'] })}
          >
            <option value="">Any</option>
            {Object.entries(END_REASON_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Channel
          <select
            value={filters.channel}
            onChange={(e) => set({ channel: e.currentTarget.value as Filters['channel'] })}
          >
            <option value="">Any</option>
            {Object.entries(CHANNEL_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Answered by
          <select
            value={filters.answered_by}
            onChange={(e) => set({ answered_by: e.currentTarget.value as Filters['answered_by'] })}
          >
            <option value="">Anyone</option>
            {Object.entries(ANSWERED_BY_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Handoffs
          <select
            value={filters.handed_off}
            onChange={(e) => set({ handed_off: e.currentTarget.value as Filters['handed_off'] })}
          >
            <option value="">Any</option>
            <option value="true">Handed off</option>
            <option value="false">Not handed off</option>
          </select>
        </label>
        <label>
          Agent version
          <input
            type="number"
            min={1}
            inputMode="numeric"
            value={filters.agent_version}
            onChange={(e) => set({ agent_version: e.currentTarget.value.trim() })}
          />
        </label>
        {filtered && (
          <p class="filters-link">
            <a href="/calls">Clear filters</a>
          </p>
        )}
      </form>
      <PagedTable
        caption="Calls"
        queryKey={['calls', workspace_id, filters]}
        rowKey={(call) => call.id}
        empty="No calls match."
        refetchInterval={5000}
        fetchPage={(cursor?: string) => listCalls(workspace_id, filters, cursor)}
        columns={[
          {
            label: 'Other party',
            render: (call) => <a href={`/calls/${call.id}`}>{otherParty(call)}</a>,
          },
          { label: 'When', render: (call) => when(call.created_at) },
          {
            label: 'Agent',
            render: (call) => (
              <>
                {call.agent_name}
                {call.agent_version !== null && <span class="muted"> · v{call.agent_version}</span>}
              </>
            ),
          },
          {
            label: 'Handoffs',
            render: (call) =>
              call.handoff_count === 0 ? (
                '—'
              ) : (
                <span
                  title={`Handed off ${call.handoff_count === 1 ? 'once' : `${call.handoff_count} times`}; ${agentName(call.active_agent_id)} spoke last`}
                >
                  {call.handoff_count} → {agentName(call.active_agent_id)}
                </span>
              ),
          },
          {
            label: 'Channel',
            render: (call) => `${CHANNEL_LABELS[call.channel]} · ${call.direction}`,
          },
          { label: 'Answered by', render: (call) => ANSWERED_BY_LABELS[call.answered_by] },
          {
            label: 'Outcome',
            render: (call) => (
              <>
                <span class={`badge ${call.status}`}>{call.status}</span>
                {call.end_reason !== null && call.end_reason !== 'completed' && (
                  <span class="end-reason"> {endReasonLabel(call.end_reason)}</span>
                )}
              </>
            ),
          },
          {
            label: 'Duration',
            render: (call) => (call.duration_seconds === null ? '—' : `${call.duration_seconds} s`),
          },
          { label: 'Credits', render: (call) => (call.credits === null ? '—' : call.credits) },
          { label: 'Sentiment', render: (call) => call.user_sentiment ?? '—' },
          {
            label: 'Success',
            render: (call) => (call.call_successful === null ? '—' : SUCCESS[`${call.call_successful}`]),
          },
          {
            label: 'Summary',
            render: (call) => (
              <span class="summary-line" title={call.summary_line ?? undefined}>
                {call.summary_line ?? (call.end_reason === 'voicemail' ? 'Voicemail: no conversation' : '—')}
              </span>
            ),
          },
        ]}
      />
    </section>
  );
}
