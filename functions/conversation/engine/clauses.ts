/**
 * Splits a streamed reply into clause-sized pieces for text-to-speech: a piece leaves as soon as a
 * clause ends (. ! ? ; : or a comma after a few words, followed by a space), never one piece per token
 * and never the whole reply at once. What is left at the end is flushed by the caller.
 */
const CLAUSE_END = /[.!?;:](?=\s)|[.!?](?=["')\]]\s)|,(?=\s)/g;
/** A comma ends a piece only when the piece has at least this many characters (no "Yes," pieces). */
const MIN_COMMA_PIECE = 24;

export class ClauseChunker {
  private buffer = '';

  /** Adds streamed text; returns the complete clauses it closed, in order. */
  push(text: string): string[] {
    this.buffer += text;
    const pieces: string[] = [];
    let start = 0;
    CLAUSE_END.lastIndex = 0;
    for (let match = CLAUSE_END.exec(this.buffer); match; match = CLAUSE_END.exec(this.buffer)) {
      const end = match.index + 1;
      const piece = this.buffer.slice(start, end);
      if (match[0] === ',' && piece.trim().length < MIN_COMMA_PIECE) continue;
      if (piece.trim() !== '') pieces.push(piece);
      start = end;
    }
    this.buffer = this.buffer.slice(start);
    return pieces;
  }

  /** What is left (the reply's last clause when it had no final punctuation). */
  flush(): string {
    const rest = this.buffer;
    this.buffer = '';
    return rest;
  }
}
