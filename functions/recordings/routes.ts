import { defineRoute } from '../platform/http/route.js';
import * as recordings from './schemas.js';

const PUBLIC_RECORDING = '/api/v1/public/recordings/{short_code}';

/**
 * The public recording page (no auth; the short code is the secret, ≥ 64 bits): an HTML page with an
 * audio player and the SMS replies tied to the code, and the same facts as JSON. An unknown or
 * malformed code is 404 `Recording not found` (and a not-found page), never a 5xx.
 */
export const recordingRoutes = {
  recordingPage: defineRoute({
    method: 'GET',
    path: '/r/{short_code}',
    summary: 'Public recording page',
    description:
      'The public recording page: an audio player (or “recording unavailable” when it expired or its source ' +
      'is gone) and the SMS replies tied to the code; 404 page for an unknown code. Strict Content-Security-Policy',
    auth: 'none',
    contentType: 'text/html',
    access: { table: 'read', bucket: 'read' },
  }),
  getPublicRecording: defineRoute({
    method: 'GET',
    path: PUBLIC_RECORDING,
    summary: 'Get a public recording',
    description:
      'A recording by its short code: {recording: {available, url|null}, replies}; available false when the ' +
      'recording expired (6 months) or its source is gone; 404 Recording not found for an unknown code',
    auth: 'none',
    response: recordings.PublicRecordingResponse,
    successStatus: 200,
    access: { table: 'read', bucket: 'read' },
  }),
  listPublicRecordingReplies: defineRoute({
    method: 'GET',
    path: `${PUBLIC_RECORDING}/replies`,
    summary: "List a public recording's replies",
    description:
      'The SMS replies tied to a short code, oldest first ({items}; empty is normal); 404 for an unknown code',
    auth: 'none',
    response: recordings.PublicRecordingReplies,
    successStatus: 200,
    access: { table: 'read' },
  }),
};
