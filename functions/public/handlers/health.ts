import { implement } from '../../platform/http/index.js';
import { publicRoutes } from '../routes.js';
import { HttpError } from '../../platform/errors.js';
import { probeBucket, probeQueue, probeTable } from '../../platform/probes.js';
import { logger } from '../../platform/logger.js';

/** `GET /api/v1/health`: 200 `{status:"ok"}` once the table, a queue and the bucket all answer. */
export const handler = implement(publicRoutes.health, async () => {
  const checks = await Promise.allSettled([probeTable(), probeQueue('calls'), probeBucket()]);
  const names = ['table', 'queue', 'bucket'];
  const failed = checks.flatMap((check, i) => (check.status === 'rejected' ? [names[i]] : []));
  if (failed.length > 0) {
    logger.warn('health check failed', {
      failed,
      reasons: checks.map((c) => (c.status === 'rejected' ? String(c.reason) : 'ok')),
    });
    throw new HttpError(503, `Unavailable: ${failed.join(', ')}`);
  }
  return { status: 200, body: { status: 'ok', checks: { table: 'ok', queue: 'ok', bucket: 'ok' } } };
});
