import type { ReportItem as Item } from './analytics';

const number = new Intl.NumberFormat('en-AU');
const percent = (rate: number | null) => (rate === null ? '—' : `${Math.round(rate * 1000) / 10} %`);
const seconds = (value: number) => `${Math.round(value)} s`;

interface Metric {
  label: string;
  value: (item: Item) => number | null;
  text: (item: Item) => string;
}

/** What the comparison sets side by side for each version. */
const METRICS: Metric[] = [
  { label: 'Calls', value: (i) => i.calls, text: (i) => number.format(i.calls) },
  { label: 'Success rate', value: (i) => i.success_rate, text: (i) => percent(i.success_rate) },
  {
    label: 'Mean duration',
    value: (i) => (i.answered > 0 ? i.average_seconds : null),
    text: (i) => (i.answered > 0 ? seconds(i.average_seconds) : '—'),
  },
  { label: 'Credits', value: (i) => i.credits, text: (i) => number.format(i.credits) },
  {
    label: 'Latency p50',
    value: (i) => i.turn_latency.p50_ms,
    text: (i) => (i.turn_latency.p50_ms === null ? '—' : `${number.format(i.turn_latency.p50_ms)} ms`),
  },
];

const COLOURS = ['#2457c5', '#1d7a46', '#8a5a00', '#b42318', '#6a3fb5', '#0f6f7a'];

/**
 * Each metric as a row of bars, one a version, scaled to that metric's largest value (an SVG drawn
 * here: a few bars need no chart library). The table beside it has the figures.
 */
function VersionBars({ items, label }: { items: Item[]; label: (item: Item) => string }) {
  const barHeight = 14;
  const gap = 4;
  const groupHeight = items.length * (barHeight + gap) + 22;
  const height = METRICS.length * groupHeight;
  return (
    <figure class="chart-figure">
      <svg
        class="version-bars"
        viewBox={`0 0 400 ${height}`}
        width="100%"
        role="img"
        aria-label="Calls, success rate, mean duration, credits and latency p50 by version"
      >
        {METRICS.map((metric, m) => {
          const max = Math.max(0, ...items.map((item) => metric.value(item) ?? 0));
          const top = m * groupHeight;
          return (
            <g key={metric.label}>
              <text x="0" y={top + 14} class="bar-title">
                {metric.label}
              </text>
              {items.map((item, v) => {
                const value = metric.value(item);
                const width = value === null || max === 0 ? 0 : (value / max) * 260;
                const y = top + 20 + v * (barHeight + gap);
                return (
                  <g key={item.key}>
                    <rect
                      x="0"
                      y={y}
                      width={Math.max(width, 1)}
                      height={barHeight}
                      fill={COLOURS[v % COLOURS.length]}
                    />
                    <text x={width + 6} y={y + barHeight - 3} class="bar-label">
                      {label(item)}: {metric.text(item)}
                    </text>
                  </g>
                );
              })}
            </g>
          );
        })}
      </svg>
      <figcaption class="hint">Each bar is a version; bars of a metric are scaled to its largest.</figcaption>
    </figure>
  );
}

/** The agent's versions side by side: the figures by version, and the same as bars. */
export function VersionComparison({
  items,
  agentName,
}: {
  items: Item[];
  agentName: (id: string) => string;
}) {
  const rows = items
    .filter((item) => item.calls > 0)
    .sort((a, b) =>
      a.agent_id === b.agent_id
        ? (a.agent_version ?? 0) - (b.agent_version ?? 0)
        : agentName(a.agent_id ?? '').localeCompare(agentName(b.agent_id ?? '')),
    );
  const agents = new Set(rows.map((item) => item.agent_id));
  const label = (item: Item) =>
    item.agent_version === undefined || item.agent_version === null
      ? 'No version'
      : agents.size > 1
        ? `${agentName(item.agent_id ?? '')} v${item.agent_version}`
        : `Version ${item.agent_version}`;
  if (rows.length === 0) return <p class="empty">No calls in this period.</p>;
  return (
    <section aria-label="Version comparison">
      <h2>Versions compared</h2>
      {rows.length < 2 && (
        <p class="hint">
          Only one version has calls in this period: save a change and make a call to compare.
        </p>
      )}
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Calls by agent version</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              {METRICS.map((metric) => (
                <th scope="col" key={metric.label}>
                  {metric.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((item) => (
              <tr key={item.key}>
                <th scope="row" data-label="Version">
                  {item.agent_id && item.agent_version ? (
                    <a href={`/agents/${item.agent_id}?version=${item.agent_version}#versions`}>
                      {label(item)}
                    </a>
                  ) : (
                    label(item)
                  )}
                </th>
                {METRICS.map((metric) => (
                  <td key={metric.label} data-label={metric.label}>
                    {metric.text(item)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <VersionBars items={rows} label={label} />
    </section>
  );
}
