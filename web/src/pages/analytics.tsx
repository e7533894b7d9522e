import { useEffect, useRef, useState } from 'preact/hooks';
import { useQuery } from '@tanstack/preact-query';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api/client';
import { agentQueries } from '../api/queries/agents';
import { ErrorState, Loading, PageHeader } from '../components/ui';
import { useWorkspaceId } from '../session';
import { VersionComparison } from './analytics-versions';
import 'uplot/dist/uPlot.min.css';

type GroupBy = 'day' | 'agent' | 'status' | 'agent_version';
type Report = Awaited<ReturnType<typeof fetchReport>>;
type Item = Report['items'][number];
export type ReportItem = Item;

const GROUPS: [GroupBy, string][] = [
  ['day', 'Day'],
  ['agent', 'Agent'],
  ['agent_version', 'Agent version'],
  ['status', 'Status'],
];

const fetchReport = (workspace_id: string, group_by: GroupBy, agent_id: string) =>
  ok(
    api().GET('/api/v1/workspaces/{workspace_id}/analytics/calls', {
      params: { path: { workspace_id }, query: { group_by, agent_id: agent_id || undefined } },
    }),
  );

const number = new Intl.NumberFormat('en-AU');
const percent = (rate: number | null) => (rate === null ? '—' : `${Math.round(rate * 1000) / 10} %`);
const duration = (seconds: number) =>
  seconds >= 60
    ? `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`
    : `${Math.round(seconds)} s`;

/** The headline figures of the range, first on the page. */
function Headline({ totals }: { totals: Item }) {
  const figures: [label: string, value: string, note?: string][] = [
    ['Calls', number.format(totals.calls)],
    ['Answer rate', percent(totals.answer_rate), `${number.format(totals.answered)} answered`],
    [
      'Success rate',
      percent(totals.success_rate),
      `${number.format(totals.successful)} of ${number.format(totals.analysed)} analysed`,
    ],
    ['Average duration', totals.answered > 0 ? duration(totals.average_seconds) : '—', 'of answered calls'],
    ['Credits', number.format(totals.credits)],
    [
      'Turn latency p50',
      totals.turn_latency.p50_ms === null ? '—' : `${number.format(totals.turn_latency.p50_ms)} ms`,
      `over ${number.format(totals.turn_latency.turns)} turns`,
    ],
  ];
  return (
    <dl class="figures" aria-label="Headline figures">
      {figures.map(([label, value, note]) => (
        <div class="figure" key={label}>
          <dt>{label}</dt>
          <dd>
            <span class="figure-value">{value}</span>
            {note && <small class="hint">{note}</small>}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** Calls a day as a uPlot line chart over the page's width (uPlot is loaded with this page only). */
function CallsChart({ items }: { items: Item[] }) {
  const host = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setWidth(Math.floor(element.clientWidth)));
    observer.observe(element);
    setWidth(Math.floor(element.clientWidth));
    return () => observer.disconnect();
  }, []);
  useEffect(() => {
    if (width === 0) return;
    let chart: { destroy(): void } | undefined;
    let cancelled = false;
    void import('uplot').then(({ default: UPlot }) => {
      if (cancelled || !host.current) return;
      const xs = items.map((item) => Date.parse(`${item.key}T00:00:00Z`) / 1000);
      chart = new UPlot(
        {
          width,
          height: 240,
          legend: { show: false },
          series: [
            {},
            { label: 'Calls', stroke: '#2457c5', width: 2 },
            { label: 'Answered', stroke: '#1d7a46', width: 2 },
          ],
        },
        [xs, items.map((item) => item.calls), items.map((item) => item.answered)],
        host.current,
      );
    });
    return () => {
      cancelled = true;
      chart?.destroy();
    };
  }, [items, width]);
  return (
    <figure class="chart-figure">
      <div ref={host} class="chart" role="img" aria-label="Calls and answered calls by day" />
      <figcaption class="hint">
        <span class="key calls">Calls</span> and <span class="key answered">answered calls</span> a day
      </figcaption>
    </figure>
  );
}

export default function Analytics() {
  const workspace_id = useWorkspaceId();
  // `?group_by=agent_version&agent_id=…` (the agent page's Versions link) opens the comparison.
  const { query } = useLocation();
  const [groupBy, setGroupBy] = useState<GroupBy>(
    GROUPS.find(([value]) => value === query.group_by)?.[0] ?? 'day',
  );
  const [agentId, setAgentId] = useState(query.agent_id ?? '');
  const agents = useQuery(agentQueries.all(workspace_id));
  const agentName = (id: string) => agents.data?.items.find((a) => a.id === id)?.name ?? id;
  const report = useQuery({
    queryKey: ['analytics', workspace_id, groupBy, agentId],
    queryFn: () => fetchReport(workspace_id, groupBy, agentId),
  });
  // The table lists only days (agents, statuses) with calls; the chart shows every day of the range.
  const rows = report.data?.items.filter((item) => item.calls > 0) ?? [];
  const keyLabel = GROUPS.find(([value]) => value === groupBy)?.[1] ?? 'Day';
  return (
    <section>
      <PageHeader title="Analytics" />
      <form class="filters" aria-label="Report" onSubmit={(e) => e.preventDefault()}>
        <label>
          Group by
          <select value={groupBy} onChange={(e) => setGroupBy(e.currentTarget.value as GroupBy)}>
            {GROUPS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Agent
          <select value={agentId} onChange={(e) => setAgentId(e.currentTarget.value)}>
            <option value="">Every agent</option>
            {(agents.data?.items ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
      </form>
      {report.isPending && <Loading />}
      {report.isError && <ErrorState error={report.error} retry={() => void report.refetch()} />}
      {report.data && (
        <>
          <p class="hint">
            {report.data.from} to {report.data.to} ({report.data.timezone})
          </p>
          <Headline totals={report.data.totals} />
          {groupBy === 'day' && <CallsChart items={report.data.items} />}
          {groupBy === 'agent_version' ? (
            <VersionComparison items={report.data.items} agentName={agentName} />
          ) : rows.length === 0 ? (
            <p class="empty">No calls in this period.</p>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Calls by {keyLabel.toLowerCase()}</caption>
                <thead>
                  <tr>
                    {[
                      keyLabel,
                      'Calls',
                      'Answered',
                      'Completed',
                      'Failed',
                      'Success',
                      'Minutes',
                      'Credits',
                    ].map((label) => (
                      <th scope="col" key={label}>
                        {label}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {rows.map((item) => (
                    <tr key={item.key}>
                      <td data-label={keyLabel}>{groupBy === 'agent' ? agentName(item.key) : item.key}</td>
                      <td data-label="Calls">{number.format(item.calls)}</td>
                      <td data-label="Answered">{number.format(item.answered)}</td>
                      <td data-label="Completed">{number.format(item.completed)}</td>
                      <td data-label="Failed">{number.format(item.failed)}</td>
                      <td data-label="Success">{percent(item.success_rate)}</td>
                      <td data-label="Minutes">{number.format(Math.round(item.total_seconds / 6) / 10)}</td>
                      <td data-label="Credits">{number.format(item.credits)}</td>
                    </tr>
                  ))}
                </tbody>
                <tfoot>
                  <tr>
                    <th scope="row" data-label={keyLabel}>
                      Total
                    </th>
                    <td data-label="Calls">{number.format(report.data.totals.calls)}</td>
                    <td data-label="Answered">{number.format(report.data.totals.answered)}</td>
                    <td data-label="Completed">{number.format(report.data.totals.completed)}</td>
                    <td data-label="Failed">{number.format(report.data.totals.failed)}</td>
                    <td data-label="Success">{percent(report.data.totals.success_rate)}</td>
                    <td data-label="Minutes">
                      {number.format(Math.round(report.data.totals.total_seconds / 6) / 10)}
                    </td>
                    <td data-label="Credits">{number.format(report.data.totals.credits)}</td>
                  </tr>
                </tfoot>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
