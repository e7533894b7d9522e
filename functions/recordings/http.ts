import { domainHandler } from '../platform/http/index.js';
import { recordingRoutes } from './routes.js';

/** The public recording page's one HTTP function (no auth): the page and its JSON. */
export const handler = domainHandler(recordingRoutes, {
  recordingPage: () => import('./handlers/recording-page.js'),
  getPublicRecording: () => import('./handlers/get-public-recording.js'),
  listPublicRecordingReplies: () => import('./handlers/list-public-recording-replies.js'),
});
