import { LanguageModelError, type LlmToolCall } from './port.js';

/**
 * Tool calls as they stream: each block (OpenAI's `tool_calls[].index`, Bedrock's
 * `contentBlockIndex`) starts with the call's id and name and then receives its arguments as JSON
 * fragments split anywhere; `finish` parses each block's whole text. Arguments that are not a JSON
 * object are an answer we cannot read (`invalid`).
 */
export class ToolCallAssembler {
  private readonly blocks = new Map<number, { id: string; name: string; json: string }>();

  /** Whether a block with this index was started. */
  has(index: number): boolean {
    return this.blocks.has(index);
  }

  /** A block's id, name and a first fragment (any of them may come in a later piece for OpenAI). */
  add(index: number, piece: { id?: string; name?: string; arguments?: string }): void {
    const block = this.blocks.get(index) ?? { id: '', name: '', json: '' };
    if (piece.id) block.id = piece.id;
    if (piece.name && !block.name) block.name = piece.name;
    if (piece.arguments) block.json += piece.arguments;
    this.blocks.set(index, block);
  }

  get size(): number {
    return this.blocks.size;
  }

  /** The block's whole call (and forgets it). */
  finishOne(index: number): LlmToolCall {
    const block = this.blocks.get(index);
    if (!block) throw new LanguageModelError(`Tool call block ${index} was never started`, 'invalid');
    this.blocks.delete(index);
    return parseCall(index, block);
  }

  /** Every block still open, by index (and forgets them). */
  finishAll(): LlmToolCall[] {
    const calls = [...this.blocks.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, block]) => parseCall(index, block));
    this.blocks.clear();
    return calls;
  }
}

function parseCall(index: number, block: { id: string; name: string; json: string }): LlmToolCall {
  if (!block.name) throw new LanguageModelError(`Tool call ${index} has no name`, 'invalid');
  return {
    id: block.id || `call_${index}`,
    name: block.name,
    arguments: parseArguments(block.name, block.json),
  };
}

/** A tool call's arguments: a JSON object (`{}` when the model sent none). */
export function parseArguments(name: string, json: string): Record<string, unknown> {
  if (json.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new LanguageModelError(`The arguments of tool call ${name} are not JSON`, 'invalid', {
      cause: error,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new LanguageModelError(`The arguments of tool call ${name} are not a JSON object`, 'invalid');
  return value as Record<string, unknown>;
}
