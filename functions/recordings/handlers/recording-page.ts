import { implement } from '../../platform/http/index.js';
import { logger } from '../../platform/logger.js';
import { notFoundPage, pageHeaders, recordingPage, type RenderedPage } from '../page.js';
import { businessNameOf, findPublicRecording } from '../public-recordings.js';
import { recordingRoutes } from '../routes.js';
import { repliesSource } from '../replies-source.js';

/**
 * GET /r/{short_code} — the public recording page (no auth). An unknown or malformed code is the
 * not-found page (404); so is anything that fails while looking it up: the page never answers 5xx.
 */
export const handler = implement(recordingRoutes.recordingPage, async (req) => {
  let page: RenderedPage;
  let status = 200;
  try {
    const result = await findPublicRecording(req.params.short_code, repliesSource);
    if (result) {
      page = recordingPage({
        recording: result.found.recording,
        replies: result.replies,
        agentName: result.found.agentName,
        businessName: await businessNameOf(result.found.workspaceId),
        endedAt: result.found.endedAt,
      });
    } else {
      page = notFoundPage();
      status = 404;
    }
  } catch (error) {
    logger.error('public recording page failed; answering not found', { error: String(error) });
    page = notFoundPage();
    status = 404;
  }
  return {
    status,
    raw: { contentType: 'text/html; charset=utf-8', body: page.html },
    headers: pageHeaders(page),
  };
});
