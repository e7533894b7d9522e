import { implement } from '../../platform/http/index.js';
import { requirePublicRecording } from '../public-recordings.js';
import { recordingRoutes } from '../routes.js';
import { repliesSource } from '../replies-source.js';

/** GET /api/v1/public/recordings/{short_code}/replies — the SMS replies tied to the code. */
export const handler = implement(recordingRoutes.listPublicRecordingReplies, async (req) => {
  const { found, replies } = await requirePublicRecording(req.params.short_code, repliesSource);
  return {
    status: 200,
    body: { id: found.shortCode, items: replies },
    headers: { 'cache-control': 'no-store' },
  };
});
