import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Deadline, type DeadlineOptions } from './deadline.js';
import {
  LanguageModelError,
  type LanguageModelPort,
  type LlmCompletion,
  type LlmMessage,
  type LlmRequest,
  type LlmStopReason,
  type LlmStreamEvent,
  type LlmToolCall,
  type LlmUsage,
} from './port.js';
import { parseArguments, ToolCallAssembler } from './tool-calls.js';
import { recordUsage } from '../../platform/usage.js';

/**
 * The OpenAI-compatible chat-completions adapter (OpenAI, Ollama, vLLM, llama.cpp's server, the local
 * model simulator): `POST {baseUrl}/chat/completions` with plain fetch. `stream()` asks for
 * `stream: true` and reads the server-sent events (`data: {chunk}` … `data: [DONE]`): text deltas
 * are passed on as they come; `tool_calls` deltas are put together by their `index` (the id and name
 * in the first, the arguments in fragments split anywhere) and handed out whole when the choice
 * finishes. `complete()` is one non-streamed request; with `responseSchema` it asks for
 * `response_format: {type: "json_schema", json_schema: {name, schema, strict: true}}`.
 */
export interface OpenAiOptions {
  /** e.g. https://api.openai.com/v1, http://127.0.0.1:11434/v1 (Ollama). */
  baseUrl: string;
  model: string;
  apiKey?: string;
  timeouts: DeadlineOptions;
}

interface WireToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

interface WireChunk {
  choices?: {
    index?: number;
    delta?: { content?: string | null; tool_calls?: WireToolCall[] };
    finish_reason?: string | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

interface WireCompletion {
  choices?: {
    message?: { content?: string | null; refusal?: string | null; tool_calls?: WireToolCall[] };
    finish_reason?: string | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

const STOP_REASONS: Record<string, LlmStopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
};

const stopReason = (finish: string | null | undefined): LlmStopReason =>
  (finish && STOP_REASONS[finish]) || 'other';

function usageOf(usage: WireChunk['usage']): LlmUsage | undefined {
  if (!usage) return undefined;
  recordUsage('model:input_tokens', usage.prompt_tokens ?? 0);
  recordUsage('model:output_tokens', usage.completion_tokens ?? 0);
  return { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 };
}

/** The port's messages in the chat-completions dialect. */
export function toOpenAiMessages(system: string, messages: LlmMessage[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (system) out.push({ role: 'system', content: system });
  for (const message of messages) {
    if (message.role === 'user') out.push({ role: 'user', content: message.content });
    else if (message.role === 'tool')
      out.push({
        role: 'tool',
        // OpenAI's tool message has no name: the id ties it to the assistant's call.
        tool_call_id: message.toolCallId,
        content: message.content,
      });
    else {
      const calls = message.toolCalls ?? [];
      out.push({
        role: 'assistant',
        content: message.content === '' && calls.length > 0 ? null : message.content,
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((call) => ({
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: JSON.stringify(call.arguments) },
              })),
            }
          : {}),
      });
    }
  }
  return out;
}

export class OpenAiLanguageModel implements LanguageModelPort {
  readonly provider = 'openai' as const;
  readonly model: string;
  private readonly url: string;

  constructor(private readonly options: OpenAiOptions) {
    this.model = options.model;
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  }

  async *stream(request: LlmRequest): AsyncGenerator<LlmStreamEvent> {
    const deadline = new Deadline(request.signal, this.options.timeouts);
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    try {
      const response = await this.post(this.body(request, true), deadline);
      if (!response.body) throw new LanguageModelError('The model answered with no body', 'invalid');
      reader = response.body.getReader();
      const decoder = new TextDecoder();
      const pending: EventSourceMessage[] = [];
      const parser = createParser({ onEvent: (event) => pending.push(event) });
      const calls = new ToolCallAssembler();
      let finish: string | null | undefined;
      let usage: LlmUsage | undefined;
      let done = false;
      let calledTools = false;
      while (!done) {
        let read: Awaited<ReturnType<typeof reader.read>>;
        try {
          read = await reader.read();
        } catch (error) {
          throw (
            deadline.failure() ??
            new LanguageModelError('The model stream broke', 'invalid', { cause: error })
          );
        }
        if (read.done) break;
        parser.feed(decoder.decode(read.value, { stream: true }));
        for (const event of pending.splice(0)) {
          if (event.data === '[DONE]') {
            done = true;
            break;
          }
          const chunk = parseChunk(event.data);
          if (chunk.error) {
            throw new LanguageModelError(
              `The model failed mid-stream: ${chunk.error.message ?? 'unknown error'}`,
              'unavailable',
            );
          }
          usage = usageOf(chunk.usage) ?? usage;
          const choice = chunk.choices?.[0];
          if (!choice) continue;
          const text = choice.delta?.content;
          if (text) {
            deadline.started();
            yield { type: 'text', text };
          }
          for (const [position, piece] of (choice.delta?.tool_calls ?? []).entries()) {
            deadline.started();
            calls.add(piece.index ?? position, {
              id: piece.id,
              name: piece.function?.name,
              arguments: piece.function?.arguments,
            });
          }
          if (choice.finish_reason) {
            finish = choice.finish_reason;
            for (const call of calls.finishAll()) {
              calledTools = true;
              yield { type: 'tool_call', call };
            }
          }
        }
      }
      // A stream that stops before the choice finished and without [DONE] was cut off (a broken
      // connection, a crashed server); one that said [DONE] without a finish reason ended all the same.
      if (!finish && !done)
        throw new LanguageModelError('The model stream ended before the answer did', 'invalid');
      for (const call of calls.finishAll()) {
        calledTools = true;
        yield { type: 'tool_call', call };
      }
      // Some servers finish a message with tool calls as 'stop': the caller must run the tools all the same.
      const reason = stopReason(finish ?? 'stop');
      yield { type: 'end', stopReason: calledTools && reason === 'end_turn' ? 'tool_use' : reason, usage };
    } catch (error) {
      throw toModelError(error, deadline);
    } finally {
      deadline.dispose();
      // Releasing the stream after the answer (or its error) was already taken: nothing left to report.
      reader?.cancel().catch(() => {
        // The answer (or its error) was already taken: releasing the stream has nothing to report.
      });
    }
  }

  async complete(request: LlmRequest): Promise<LlmCompletion> {
    const deadline = new Deadline(request.signal, {
      firstTokenMs: this.options.timeouts.totalMs,
      totalMs: this.options.timeouts.totalMs,
    });
    try {
      const response = await this.post(this.body(request, false), deadline);
      let payload: WireCompletion;
      try {
        payload = (await response.json()) as WireCompletion;
      } catch (error) {
        throw (
          deadline.failure() ??
          new LanguageModelError('The model answer is not JSON', 'invalid', { cause: error })
        );
      }
      const choice = payload.choices?.[0];
      if (!choice?.message) throw new LanguageModelError('The model answer has no message', 'invalid');
      if (choice.message.refusal) throw new LanguageModelError('The model refused the request', 'refused');
      const text = choice.message.content ?? '';
      if (request.responseSchema) assertJson(text);
      const toolCalls: LlmToolCall[] = (choice.message.tool_calls ?? []).map((call, index) => {
        const name = call.function?.name;
        if (!name) throw new LanguageModelError(`Tool call ${index} has no name`, 'invalid');
        return {
          id: call.id || `call_${index}`,
          name,
          arguments: parseArguments(name, call.function?.arguments ?? ''),
        };
      });
      const reason = stopReason(choice.finish_reason);
      return {
        text,
        toolCalls,
        stopReason: toolCalls.length > 0 && reason === 'end_turn' ? 'tool_use' : reason,
        usage: usageOf(payload.usage),
      };
    } catch (error) {
      throw toModelError(error, deadline);
    } finally {
      deadline.dispose();
    }
  }

  private body(request: LlmRequest, stream: boolean): Record<string, unknown> {
    return {
      model: this.model,
      messages: toOpenAiMessages(request.system, request.messages),
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
      ...(request.tools && request.tools.length > 0
        ? {
            tools: request.tools.map((tool) => ({
              type: 'function',
              function: { name: tool.name, description: tool.description, parameters: tool.parameters },
            })),
          }
        : {}),
      ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.responseSchema
        ? {
            response_format: {
              type: 'json_schema',
              json_schema: {
                name: request.responseSchema.name,
                schema: request.responseSchema.schema,
                strict: true,
              },
            },
          }
        : {}),
    };
  }

  private async post(body: Record<string, unknown>, deadline: Deadline): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: body.stream ? 'text/event-stream' : 'application/json',
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        signal: deadline.signal,
      });
    } catch (error) {
      throw (
        deadline.failure() ??
        new LanguageModelError('The model could not be reached', 'unavailable', { cause: error })
      );
    }
    if (response.ok) return response;
    const detail = await errorMessage(response);
    const message = `The model answered ${response.status}${detail ? `: ${detail}` : ''}`;
    if (response.status === 408) throw new LanguageModelError(message, 'timeout');
    if (response.status === 429 || response.status >= 500)
      throw new LanguageModelError(message, 'unavailable');
    throw new LanguageModelError(message, 'refused');
  }
}

function parseChunk(data: string): WireChunk {
  try {
    const chunk = JSON.parse(data) as unknown;
    if (typeof chunk === 'object' && chunk !== null) return chunk as WireChunk;
  } catch {
    // reported below
  }
  throw new LanguageModelError('The model sent a stream event that is not JSON', 'invalid');
}

function assertJson(text: string): void {
  try {
    JSON.parse(text);
  } catch (error) {
    throw new LanguageModelError('The structured answer is not JSON', 'invalid', { cause: error });
  }
}

/** The server's own words about an error (`{error: {message}}`), short. */
async function errorMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message =
      typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (typeof message === 'string') return message.slice(0, 300);
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 300);
}

function toModelError(error: unknown, deadline: Deadline): LanguageModelError {
  if (error instanceof LanguageModelError) return error;
  return (
    deadline.failure() ?? new LanguageModelError('The model request failed', 'unavailable', { cause: error })
  );
}
