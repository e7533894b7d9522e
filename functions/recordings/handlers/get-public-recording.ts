import { implement } from '../../platform/http/index.js';
import { requirePublicRecording } from '../public-recordings.js';
import { recordingRoutes } from '../routes.js';
import { repliesSource } from '../replies-source.js';

/** GET /api/v1/public/recordings/{short_code} — the recording (playable or not) and its replies. */
export const handler = implement(recordingRoutes.getPublicRecording, async (req) => {
  const { found, replies } = await requirePublicRecording(req.params.short_code, repliesSource);
  return {
    status: 200,
    body: {
      id: found.shortCode,
      recording: { available: found.recording.available, url: found.recording.url },
      replies,
    },
    headers: { 'cache-control': 'no-store' },
  };
});
