import { domainHandler } from '../platform/http/index.js';
import { recordingRoutes } from './routes.js';
import { handler as recordingPage } from './handlers/recording-page.js';
import { handler as getPublicRecording } from './handlers/get-public-recording.js';
import { handler as listPublicRecordingReplies } from './handlers/list-public-recording-replies.js';

/** The public recording page's one HTTP function (no auth): the page and its JSON. */
export const handler = domainHandler(recordingRoutes, {
  recordingPage,
  getPublicRecording,
  listPublicRecordingReplies,
});
