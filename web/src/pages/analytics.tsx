import { useEffect, useRef, useState } from 'preact/hooks';
import { useQuery } from '@tanstack/preact-query';
import { api, ok } from '../api/client';
import { Empty, ErrorState, Loading, PageHeader } from '../components/ui';
import { useWorkspaceId } from '../session';
import 'uplot/dist/uPlot.min.css';

type GroupBy = 'day' | 'agent' | 'status';

/** Calls a day as a uPlot line chart (uPlot is loaded with this page only). */
function CallsChart({ items }: { items: { key: string; calls: number; completed: number }[] }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let chart: { destroy(): void } | undefined;
    let cancelled = false;
    void import('uplot').then(({ default: UPlot }) => {
      if (cancelled || !host.current) return;
      const xs = items.map((item) => Date.parse(`${item.key}T00:00:00Z`) / 1000);
      chart = new UPlot(
        {
          width: Math.min(host.current.clientWidth || 600, 900),
          height: 240,
          series: [{}, { label: 'Calls', stroke: '#2457c5' }, { label: 'Completed', stroke: '#1d7a46' }],
        },
        [xs, items.map((item) => item.calls), items.map((item) => item.completed)],
        host.current,
      );
    });
    return () => {
      cancelled = true;
      chart?.destroy();
    };
  }, [items]);
  return <div ref={host} class="chart" role="img" aria-label="Calls by day" />;
}

export default function Analytics() {
  const workspace_id = useWorkspaceId();
  const [groupBy, setGroupBy] = useState<GroupBy>('day');
  const report = useQuery({
    queryKey: ['analytics', workspace_id, groupBy],
    queryFn: () =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/analytics/calls', {
          params: { path: { workspace_id }, query: { group_by: groupBy } },
        }),
      ),
  });
  return (
    <section>
      <PageHeader title="Analytics" />
      <label>
        Group by{' '}
        <select value={groupBy} onChange={(e) => setGroupBy(e.currentTarget.value as GroupBy)}>
          <option value="day">Day</option>
          <option value="agent">Agent</option>
          <option value="status">Status</option>
        </select>
      </label>
      {report.isPending && <Loading />}
      {report.isError && <ErrorState error={report.error} retry={() => void report.refetch()} />}
      {report.data && report.data.items.length === 0 && <Empty>No calls in this period.</Empty>}
      {report.data && report.data.items.length > 0 && (
        <>
          {groupBy === 'day' && <CallsChart items={report.data.items} />}
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Calls by {groupBy}</caption>
              <thead>
                <tr>
                  <th scope="col">{groupBy === 'day' ? 'Day' : groupBy === 'agent' ? 'Agent' : 'Status'}</th>
                  <th scope="col">Calls</th>
                  <th scope="col">Answered</th>
                  <th scope="col">Completed</th>
                  <th scope="col">Failed</th>
                  <th scope="col">Minutes</th>
                  <th scope="col">Credits</th>
                </tr>
              </thead>
              <tbody>
                {report.data.items.map((item) => (
                  <tr key={item.key}>
                    <td data-label="Key">{item.key}</td>
                    <td data-label="Calls">{item.calls}</td>
                    <td data-label="Answered">{item.answered}</td>
                    <td data-label="Completed">{item.completed}</td>
                    <td data-label="Failed">{item.failed}</td>
                    <td data-label="Minutes">{Math.round(item.total_seconds / 6) / 10}</td>
                    <td data-label="Credits">{item.credits}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
