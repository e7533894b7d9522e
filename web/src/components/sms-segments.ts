/*
 * The SMS segment rule the API charges by (functions/billing/sms-segments.ts), imported as it is, so
 * the composer's counter and the charge can never disagree: GSM-7 160 characters, or 153 a part;
 * UCS-2 (any character outside GSM-7, an emoji) 70, or 67 a part; GSM-7's extension characters
 * (`€ [ ] { } | ^ ~ \`) count two.
 */
import { smsSegmentation, type SmsSegmentation } from '../../../functions/billing/sms-segments.js';

export type { SmsSegmentation };

/** The segments of a message as the API will count them; an empty message has none. */
export function segmentsOf(text: string): SmsSegmentation {
  if (text.length === 0) return { encoding: 'GSM-7', segments: 0, characters: 0 };
  return smsSegmentation(text);
}

/** What a part holds in the message's encoding: one part's limit, or a multipart message's part. */
export function partLimit(s: SmsSegmentation): number {
  if (s.encoding === 'UCS-2') return s.segments > 1 ? 67 : 70;
  return s.segments > 1 ? 153 : 160;
}
