import * as z from 'zod';
import { schemaOnFirstUse } from '../platform/first-use.js';

/** The public recording page's JSON (no auth): a recording by its short code and the SMS replies tied to it. */
export const PUBLIC_RECORDING_NOT_FOUND = 'Recording not found';

export const ReplyResponse = schemaOnFirstUse(() => z.object({ body: z.string(), received_at: z.string() }));

export const PublicRecordingResponse = schemaOnFirstUse(() =>
  z.object({
    /** The short code. */
    id: z.string(),
    recording: z.object({ available: z.boolean(), url: z.string().nullable() }),
    replies: z.array(ReplyResponse),
  }),
);

export const PublicRecordingReplies = schemaOnFirstUse(() =>
  z.object({
    /** The short code. */
    id: z.string(),
    items: z.array(ReplyResponse),
  }),
);

export type Reply = z.infer<typeof ReplyResponse>;
