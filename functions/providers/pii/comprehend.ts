import { awsFetch, serviceEndpoint } from '../../platform/aws-http.js';
import { logger } from '../../platform/logger.js';
import type { DetectedPii, PiiDetector } from './port.js';

/** Comprehend reads at most 100 KB per DetectPiiEntities request (UTF-8); texts are batched under it. */
const MAX_BATCH_BYTES = 90_000;
const SEPARATOR = '\n\n';
/** Comprehend's PII types this detector reports. */
const TYPES: Record<string, DetectedPii['category']> = { NAME: 'person_name', ADDRESS: 'address' };

/**
 * Amazon Comprehend `DetectPiiEntities` (English and Spanish), as a signed JSON request
 * (platform/aws-http.ts: the Comprehend client would add its weight to the functions that record
 * conversations). A call's texts go in as few requests as fit under 100 KB (each text's spans mapped
 * back to it). A failed or throttled request leaves its texts without spans (the rules still apply),
 * logged without the text. The stack grants `comprehend:DetectPiiEntities` to the functions that store
 * conversations when the CDK context `piiDetector` is `comprehend`.
 */
export class ComprehendPiiDetector implements PiiDetector {
  readonly name = 'comprehend' as const;

  constructor(
    private readonly options: {
      region: string;
      endpoint?: string;
      credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
      /** Per request (the post-call budget). */
      timeoutMs?: number;
    },
  ) {}

  async detect(texts: readonly string[], language: string): Promise<DetectedPii[][]> {
    const out: DetectedPii[][] = texts.map(() => []);
    const code = language.toLowerCase().startsWith('es') ? 'es' : 'en';
    let batch: number[] = [];
    let bytes = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const members = batch;
      batch = [];
      bytes = 0;
      await this.request(members, texts, code, out);
    };
    for (const [i, text] of texts.entries()) {
      if (text.trim().length === 0) continue;
      const size = Buffer.byteLength(text) + SEPARATOR.length;
      if (size > MAX_BATCH_BYTES) continue; // longer than one request: rules only
      if (bytes + size > MAX_BATCH_BYTES) await flush();
      batch.push(i);
      bytes += size;
    }
    await flush();
    return out;
  }

  private async request(
    members: number[],
    texts: readonly string[],
    languageCode: string,
    out: DetectedPii[][],
  ): Promise<void> {
    const starts: number[] = [];
    let joined = '';
    for (const i of members) {
      if (joined) joined += SEPARATOR;
      starts.push(joined.length);
      joined += texts[i]!;
    }
    try {
      const base = this.options.endpoint
        ? new URL(this.options.endpoint)
        : serviceEndpoint('COMPREHEND', `comprehend.${this.options.region}.amazonaws.com`);
      const response = await awsFetch(
        {
          service: 'comprehend',
          region: this.options.region,
          method: 'POST',
          url: new URL('/', base),
          headers: {
            'content-type': 'application/x-amz-json-1.1',
            'x-amz-target': 'Comprehend_20171127.DetectPiiEntities',
          },
          body: JSON.stringify({ Text: joined, LanguageCode: languageCode }),
          credentials: this.options.credentials,
        },
        { signal: AbortSignal.timeout(this.options.timeoutMs ?? 3000) },
      );
      const result = (await response.json()) as {
        Entities?: { Type?: string; BeginOffset?: number; EndOffset?: number }[];
      };
      for (const entity of result.Entities ?? []) {
        const category = entity.Type ? TYPES[entity.Type] : undefined;
        if (!category || entity.BeginOffset === undefined || entity.EndOffset === undefined) continue;
        // Comprehend's offsets count characters of the text sent.
        const k = starts.findLastIndex((s) => s <= entity.BeginOffset!);
        if (k < 0) continue;
        const text = texts[members[k]!]!;
        const start = entity.BeginOffset - starts[k]!;
        const end = Math.min(entity.EndOffset - starts[k]!, text.length);
        if (end > start) out[members[k]!]!.push({ start, end, category });
      }
    } catch (error) {
      logger.warn('comprehend DetectPiiEntities failed; rules and known values only', {
        texts: members.length,
        error: error instanceof Error ? error.name : 'unknown',
      });
    }
  }
}
