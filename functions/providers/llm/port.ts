/**
 * The language-model port: what the conversation engine, post-call analysis and evaluations need from
 * a model. Adapters: Amazon Bedrock ConverseStream (`bedrock.ts`, the cloud default) and any
 * OpenAI-compatible chat-completions server (`openai.ts`: OpenAI, Ollama, vLLM, llama.cpp, and the local
 * model simulator). Both stream text and tool calls; tool-call arguments arrive as JSON fragments that
 * the adapter reassembles by the block's index and parses at the block's end, so callers only ever see
 * whole tool calls.
 */

/** A JSON Schema object (the tool's input, or a structured output). */
export type JsonSchema = Record<string, unknown>;

export interface LlmTool {
  /** `^[a-zA-Z0-9_-]{1,64}$` (both vendors' rule). */
  name: string;
  description: string;
  /** JSON Schema of the arguments (`type: "object"`). */
  parameters: JsonSchema;
}

export interface LlmToolCall {
  /** The model's id of the call (the tool result names it). */
  id: string;
  name: string;
  /** The parsed arguments; `{}` when the model sent none. */
  arguments: Record<string, unknown>;
}

export type LlmMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: LlmToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

export interface LlmRequest {
  /** The system prompt. */
  system: string;
  /** The conversation so far, oldest first; starts with a `user` message for Bedrock (the adapter adapts). */
  messages: LlmMessage[];
  tools?: LlmTool[];
  /** Upper bound of generated tokens. */
  maxTokens?: number;
  temperature?: number;
  /**
   * Structured output: the reply's text is one JSON value valid for this schema (OpenAI
   * `response_format: json_schema`; Bedrock: a forced tool whose input is the value). Not streamed.
   */
  responseSchema?: { name: string; schema: JsonSchema };
  /** Aborts the request (a newer prompt or an interruption superseded the turn; a deadline). */
  signal?: AbortSignal;
}

export type LlmStopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'other';

export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
}

export type LlmStreamEvent =
  /** A piece of the reply's text, in order. */
  | { type: 'text'; text: string }
  /** A whole tool call (its argument fragments reassembled and parsed). */
  | { type: 'tool_call'; call: LlmToolCall }
  /** The end of the model's turn. */
  | { type: 'end'; stopReason: LlmStopReason; usage?: LlmUsage };

export interface LlmCompletion {
  text: string;
  toolCalls: LlmToolCall[];
  stopReason: LlmStopReason;
  usage?: LlmUsage;
}

export interface LanguageModelPort {
  readonly provider: 'bedrock' | 'openai';
  readonly model: string;
  /** The reply as it is generated. Throws LanguageModelError (before or during the stream). */
  stream(request: LlmRequest): AsyncIterable<LlmStreamEvent>;
  /** The whole reply at once (analysis, judging: `responseSchema`). Throws LanguageModelError. */
  complete(request: LlmRequest): Promise<LlmCompletion>;
}

/**
 * The model failed: `timeout` (no answer in time), `unavailable` (network, 5xx, throttled), `refused`
 * (a 4xx: bad request, credentials, unknown model), `invalid` (an answer we cannot read: broken
 * stream, a tool call whose arguments are not JSON), `aborted` (the caller's signal).
 */
export class LanguageModelError extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'unavailable' | 'refused' | 'invalid' | 'aborted',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LanguageModelError';
  }
}
