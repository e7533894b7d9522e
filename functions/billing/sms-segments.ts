import { SegmentedMessage } from 'sms-segments-calculator';

/*
 * Apart from the metering rules (rules.ts) because the segment counter and its grapheme tables are
 * needed only where SMS text is priced: SMS code imports it, the meter loads it on its first SMS charge.
 */

export interface SmsSegmentation {
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  characters: number;
}

/** Segments of an SMS as the carrier counts them (GSM-7 or UCS-2, with the multipart headers). */
export function smsSegmentation(text: string): SmsSegmentation {
  if (text.length === 0) throw new Error('an SMS needs text');
  const message = new SegmentedMessage(text);
  return {
    encoding: message.encodingName,
    segments: message.segmentsCount,
    characters: message.numberOfCharacters,
  };
}
