import * as z from 'zod';
import { schemaOnFirstUse } from '../../platform/first-use.js';
import { ComprehendPiiDetector } from './comprehend.js';
import type { PiiDetector } from './port.js';

export type { DetectedPii, PiiDetector } from './port.js';

const PiiConfig = schemaOnFirstUse(() =>
  z.object({
    /** `comprehend` (CDK context `piiDetector: comprehend`); otherwise rules and known values only. */
    PII_DETECTOR: z.enum(['local', 'comprehend']).default('local'),
    AWS_REGION: z.string().default('ap-southeast-2'),
  }),
);

/** The local adapter: no outside detector (the redactor's rules and known values do the work). */
export const localPiiDetector: PiiDetector = {
  name: 'local',
  detect: (texts) => Promise.resolve(texts.map(() => [])),
};

let detector: PiiDetector | undefined;

/** The configured adapter, built once per container. */
export function piiDetector(): PiiDetector {
  if (!detector) {
    const env = PiiConfig.parse(process.env);
    detector =
      env.PII_DETECTOR === 'comprehend'
        ? new ComprehendPiiDetector({ region: env.AWS_REGION })
        : localPiiDetector;
  }
  return detector;
}

/** Replace the adapter (tests); `undefined` goes back to the configured one. */
export function setPiiDetector(next: PiiDetector | undefined): void {
  detector = next;
}
