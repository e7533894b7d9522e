/**
 * The PII detector port: names and addresses in free text, which rules find poorly. Offsets are in
 * each text as given. An adapter that cannot answer (throttled, failing) returns no spans for the
 * texts it could not read: the rules and known values are applied all the same.
 */
export interface DetectedPii {
  start: number;
  end: number;
  category: 'person_name' | 'address';
}

export interface PiiDetector {
  readonly name: 'local' | 'comprehend';
  /** One list of spans per text, in order. `language`: BCP 47 (`en-AU`, `es-US`). */
  detect(texts: readonly string[], language: string): Promise<DetectedPii[][]>;
}
