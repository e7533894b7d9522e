import { describeImport } from '../../lib/tools/cli/imports.js';

/** `npm run cli -- import`: what it prints when the job ends (lib/tools/cli/imports.ts). */
describe('describeImport', () => {
  const job = {
    id: 'imp_1',
    status: 'completed' as const,
    progress: { done: 4, total: 4 },
    counts: { total: 4, created: 3, merged: 0, rejected: 1 },
    errors: [{ row: 4, reason: 'no phone number or e-mail' }],
    failure_reason: null,
  };

  it('prints the warnings count and the first warnings, not only created/merged/rejected', () => {
    const text = describeImport({
      ...job,
      warnings: [
        { row: 2, reason: 'phone "not-a-phone" is not a valid phone number: imported without a phone' },
        { row: 3, reason: 'e-mail "zoë@exämple.com" has a non-ASCII local part: dropped' },
      ],
    });
    expect(text.split('\n')).toEqual([
      'Import imp_1 completed: 4 rows, 3 created, 0 merged, 1 rejected, 2 warnings',
      '  row 4: no phone number or e-mail',
      'Warnings (imported with a change):',
      '  row 2: phone "not-a-phone" is not a valid phone number: imported without a phone',
      '  row 3: e-mail "zoë@exämple.com" has a non-ASCII local part: dropped',
    ]);
  });

  it('shows the first five warnings; a full list (the job lists 100) may have more', () => {
    const warnings = Array.from({ length: 100 }, (_, i) => ({ row: i + 1, reason: 'e-mail dropped' }));
    const lines = describeImport({
      ...job,
      errors: [],
      counts: { ...job.counts, rejected: 0 },
      warnings,
    }).split('\n');
    expect(lines[0]).toBe('Import imp_1 completed: 4 rows, 3 created, 0 merged, 0 rejected, 100+ warnings');
    expect(lines.filter((line) => line.startsWith('  row '))).toHaveLength(5);
    expect(lines.at(-1)).toBe('  … 95+ more warnings');
  });

  it('says 0 warnings when there are none', () => {
    expect(describeImport({ ...job, warnings: [] }).split('\n')[0]).toMatch(/, 0 warnings$/);
  });
});
