import { Redactor } from '../../../functions/platform/pii/redactor.js';

/**
 * Part `redaction`: the PII redactor's time per stored line (200 characters; rules and known values,
 * no outside detector), one call's redactor over a call's worth of lines at a time, against a floor
 * measured in the same run: the same lines through the least any pass over them does (lower-cased,
 * whitespace collapsed, searched for one pattern). Budget: p50 ≤ 1 ms a line.
 */
export const REDACTION_BUDGET = { p50Ms: 1 } as const;

const LINES = [
  'Yes, my email is john dot smith at example dot com and you can call me on oh four one two three four five six seven eight.',
  'The card is 4111 1111 1111 1111, expiry next year, and my date of birth is the fifth of March nineteen eighty two, thanks.',
  "I'm interested in the listing 48291734 at $850,000. Could we inspect it on Saturday at 10:30am? We have 3 kids and 2 dogs.",
  'My BSB is 062-000 and the account number is 1234 5678. I live at 12 Smith Street, Bondi NSW 2026, near the beach and shops.',
  'Sure, my name is Robert Brown, my TFN is 123 456 707 and Medicare is 4123 45672 1. What else do you need from me today?',
  'We were hoping to move before the end of the year, the budget is around nine hundred thousand, and we are pre-approved.',
].map((line) => line.padEnd(200, ' ok').slice(0, 200));

export interface RedactionReport {
  lines: number;
  lineChars: number;
  redactor: { p50Ms: number; p99Ms: number };
  floor: { p50Ms: number; p99Ms: number };
  budget: typeof REDACTION_BUDGET;
  withinBudget: boolean;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

function timeEach(
  count: number,
  run: (line: string, i: number) => unknown,
): { p50Ms: number; p99Ms: number } {
  const times: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const line = LINES[i % LINES.length]!;
    const started = performance.now();
    run(line, i);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50Ms: quantile(times, 0.5), p99Ms: quantile(times, 0.99) };
}

export function measureRedaction(count = 5_000): RedactionReport {
  let redactor = new Redactor({
    year: 2026,
    regions: ['AU'],
    known: [{ category: 'person_name', value: 'Jane Citizen' }],
  });
  const fresh = () =>
    new Redactor({
      year: 2026,
      regions: ['AU'],
      known: [{ category: 'person_name', value: 'Jane Citizen' }],
    });
  // Warm-up: the phone metadata is read on first use.
  timeEach(500, (line) => redactor.redact(line));
  const floor = timeEach(count, (line) => /\d{4}/.test(line.toLowerCase().replace(/\s+/g, ' ')));
  const measured = timeEach(count, (line, i) => {
    if (i % 40 === 0) redactor = fresh(); // one call: 40 lines
    return redactor.redact(line);
  });
  return {
    lines: count,
    lineChars: 200,
    redactor: measured,
    floor,
    budget: REDACTION_BUDGET,
    withinBudget: measured.p50Ms <= REDACTION_BUDGET.p50Ms,
  };
}

export function redactionTable(report: RedactionReport): string[] {
  const ms = (v: number) => v.toFixed(3);
  return [
    `| ${report.lineChars}-character line (${report.lines} lines) | p50 ms | p99 ms |`,
    '| --- | ---: | ---: |',
    `| floor (lower-case, collapse, one search) | ${ms(report.floor.p50Ms)} | ${ms(report.floor.p99Ms)} |`,
    `| redactor (rules + known values) | ${ms(report.redactor.p50Ms)} | ${ms(report.redactor.p99Ms)} |`,
    `| budget | ≤ ${report.budget.p50Ms} | |`,
    `| within budget | ${report.withinBudget ? 'yes' : '**no**'} | |`,
  ];
}
