import type {
  BedrockRuntimeClient,
  ContentBlock,
  ConverseStreamCommandInput,
  ConverseStreamOutput,
  Message,
  Tool,
  ToolUseBlock,
} from '@aws-sdk/client-bedrock-runtime';
import { traceClient } from '../../platform/tracing.js';
import { recordUsage } from '../../platform/usage.js';
import { collectCompletion } from './collect.js';
import { Deadline, type DeadlineOptions } from './deadline.js';
import {
  LanguageModelError,
  type LanguageModelPort,
  type LlmCompletion,
  type LlmMessage,
  type LlmRequest,
  type LlmStopReason,
  type LlmStreamEvent,
  type LlmUsage,
} from './port.js';
import { ToolCallAssembler } from './tool-calls.js';

/**
 * The Amazon Bedrock adapter: `ConverseStream` (the one action it needs, so its grant is
 * `bedrock:InvokeModelWithResponseStream` on the model alone; `complete()` reads the same stream to
 * its end). Text deltas are passed on as they come; a tool call starts with `contentBlockStart`
 * (`toolUse`: id and name), receives its input as JSON fragments (`contentBlockDelta.toolUse.input`)
 * by `contentBlockIndex`, and is handed out whole at that block's `contentBlockStop`. Structured
 * output is a forced tool (`toolChoice: {tool: {name}}`) whose input is the value, returned as JSON
 * text. The SDK is imported on the first request, so only the functions that converse load it; its
 * endpoint can be moved with the SDK's own `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` (tests: a local server).
 */
export interface BedrockOptions {
  model: string;
  timeouts: DeadlineOptions;
  region?: string;
}

/**
 * Bedrock wants the conversation to open with the caller; the voice runtime's opens with the agent's
 * greeting, so the adapter puts this line before it.
 */
export const CONVERSATION_OPENING = '(The call is connected.)';

const STOP_REASONS: Record<string, LlmStopReason> = {
  end_turn: 'end_turn',
  stop_sequence: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
};

const UNAVAILABLE = new Set([
  'ThrottlingException',
  'ServiceUnavailableException',
  'InternalServerException',
  'ModelStreamErrorException',
  'ModelNotReadyException',
  'ServiceQuotaExceededException',
]);

/** The port's messages as Converse's: alternating roles (tool results are the user's), no empty text. */
export function toBedrockMessages(messages: LlmMessage[]): Message[] {
  const out: Message[] = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlock[]) => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    if (last?.role === role) last.content = [...(last.content ?? []), ...blocks];
    else out.push({ role, content: blocks });
  };
  for (const message of messages) {
    if (message.role === 'user') {
      if (message.content.trim() !== '') push('user', [{ text: message.content }]);
    } else if (message.role === 'tool') {
      push('user', [{ toolResult: { toolUseId: message.toolCallId, content: [{ text: message.content }] } }]);
    } else {
      const blocks: ContentBlock[] = [];
      if (message.content.trim() !== '') blocks.push({ text: message.content });
      for (const call of message.toolCalls ?? []) {
        blocks.push({
          toolUse: { toolUseId: call.id, name: call.name, input: call.arguments as ToolUseBlock['input'] },
        });
      }
      push('assistant', blocks);
    }
  }
  if (out[0]?.role !== 'user') out.unshift({ role: 'user', content: [{ text: CONVERSATION_OPENING }] });
  return out;
}

function toolsOf(request: LlmRequest): Tool[] {
  const tools: Tool[] = (request.tools ?? []).map((tool) => ({
    toolSpec: {
      name: tool.name,
      description: tool.description,
      inputSchema: { json: tool.parameters as never },
    },
  }));
  if (request.responseSchema) {
    tools.push({
      toolSpec: {
        name: request.responseSchema.name,
        description: 'Give your answer as this tool’s input.',
        inputSchema: { json: request.responseSchema.schema as never },
      },
    });
  }
  // Converse refuses a history with tool calls but no tool configuration: name those tools again.
  if (tools.length === 0) {
    const used = new Set(
      request.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.name) : [])),
    );
    for (const name of used) {
      tools.push({
        toolSpec: {
          name,
          description: 'A tool used earlier in this conversation.',
          inputSchema: { json: { type: 'object', properties: {} } },
        },
      });
    }
  }
  return tools;
}

export function converseInput(model: string, request: LlmRequest): ConverseStreamCommandInput {
  const tools = toolsOf(request);
  return {
    modelId: model,
    messages: toBedrockMessages(request.messages),
    ...(request.system ? { system: [{ text: request.system }] } : {}),
    ...(request.maxTokens !== undefined || request.temperature !== undefined
      ? { inferenceConfig: { maxTokens: request.maxTokens, temperature: request.temperature } }
      : {}),
    ...(tools.length > 0
      ? {
          toolConfig: {
            tools,
            ...(request.responseSchema
              ? { toolChoice: { tool: { name: request.responseSchema.name } } }
              : {}),
          },
        }
      : {}),
  };
}

export class BedrockLanguageModel implements LanguageModelPort {
  readonly provider = 'bedrock' as const;
  readonly model: string;
  private client:
    | Promise<{ client: BedrockRuntimeClient; sdk: typeof import('@aws-sdk/client-bedrock-runtime') }>
    | undefined;

  constructor(private readonly options: BedrockOptions) {
    this.model = options.model;
  }

  private sdk() {
    this.client ??= import('@aws-sdk/client-bedrock-runtime').then((sdk) => ({
      sdk,
      // One retry: a turn that waits through three attempts has lost the caller anyway.
      client: traceClient(new sdk.BedrockRuntimeClient({ region: this.options.region, maxAttempts: 2 })),
    }));
    return this.client;
  }

  async *stream(request: LlmRequest): AsyncGenerator<LlmStreamEvent> {
    const deadline = new Deadline(request.signal, this.options.timeouts);
    let reading = false;
    try {
      const { client, sdk } = await this.sdk();
      const response = await client.send(new sdk.ConverseStreamCommand(converseInput(this.model, request)), {
        abortSignal: deadline.signal,
      });
      reading = true;
      const calls = new ToolCallAssembler();
      let stop: LlmStopReason | undefined;
      let usage: LlmUsage | undefined;
      for await (const event of response.stream ?? []) {
        deadline.check();
        const call = this.read(event, calls, deadline);
        if (call) yield call;
        if (event.messageStop) stop = STOP_REASONS[event.messageStop.stopReason ?? ''] ?? 'other';
        if (event.metadata?.usage) {
          usage = {
            inputTokens: event.metadata.usage.inputTokens ?? 0,
            outputTokens: event.metadata.usage.outputTokens ?? 0,
          };
          recordUsage('model:input_tokens', usage.inputTokens);
          recordUsage('model:output_tokens', usage.outputTokens);
        }
      }
      deadline.check();
      if (!stop) throw new LanguageModelError('The model stream ended before the answer did', 'invalid');
      // Blocks a model left open (no contentBlockStop) end with the message.
      for (const call of calls.finishAll()) yield { type: 'tool_call', call };
      yield { type: 'end', stopReason: stop, usage };
    } catch (error) {
      throw toModelError(error, deadline, reading);
    } finally {
      deadline.dispose();
    }
  }

  async complete(request: LlmRequest): Promise<LlmCompletion> {
    const completion = await collectCompletion(this.stream(request));
    if (!request.responseSchema) return completion;
    const answer = completion.toolCalls.find((call) => call.name === request.responseSchema?.name);
    if (!answer) throw new LanguageModelError('The model did not give the structured answer', 'invalid');
    return { ...completion, text: JSON.stringify(answer.arguments), toolCalls: [] };
  }

  /** One event of the stream: a text piece or a finished tool call to hand out, if any. */
  private read(
    event: ConverseStreamOutput,
    calls: ToolCallAssembler,
    deadline: Deadline,
  ): LlmStreamEvent | undefined {
    const failure =
      event.internalServerException ??
      event.modelStreamErrorException ??
      event.serviceUnavailableException ??
      event.throttlingException ??
      event.validationException;
    if (failure) throw failure;
    const start = event.contentBlockStart;
    if (start?.start?.toolUse) {
      deadline.started();
      calls.add(start.contentBlockIndex ?? 0, {
        id: start.start.toolUse.toolUseId,
        name: start.start.toolUse.name,
      });
      return undefined;
    }
    const delta = event.contentBlockDelta;
    if (delta?.delta?.text) {
      deadline.started();
      return { type: 'text', text: delta.delta.text };
    }
    if (delta?.delta?.toolUse) {
      const index = delta.contentBlockIndex ?? 0;
      if (!calls.has(index))
        throw new LanguageModelError(`Tool input for block ${index} before its start`, 'invalid');
      calls.add(index, { arguments: delta.delta.toolUse.input ?? '' });
      return undefined;
    }
    const stop = event.contentBlockStop;
    if (stop && calls.has(stop.contentBlockIndex ?? 0)) {
      return { type: 'tool_call', call: calls.finishOne(stop.contentBlockIndex ?? 0) };
    }
    return undefined;
  }
}

function toModelError(error: unknown, deadline: Deadline, reading: boolean): LanguageModelError {
  const stopped = deadline.failure();
  if (stopped) return stopped;
  if (error instanceof LanguageModelError) return error;
  const fault = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const name = fault?.name ?? 'Error';
  const status = fault?.$metadata?.httpStatusCode;
  const message = `Bedrock: ${name}${fault?.message ? `: ${fault.message}` : ''}`;
  if (name === 'AbortError') return new LanguageModelError(message, 'aborted', { cause: error });
  if (name === 'ModelTimeoutException' || status === 408)
    return new LanguageModelError(message, 'timeout', { cause: error });
  if (UNAVAILABLE.has(name) || status === 429 || (status !== undefined && status >= 500))
    return new LanguageModelError(message, 'unavailable', { cause: error });
  if (status !== undefined && status >= 400)
    return new LanguageModelError(message, 'refused', { cause: error });
  // No HTTP answer: the network before the stream, an unreadable stream after it started.
  return new LanguageModelError(message, reading ? 'invalid' : 'unavailable', { cause: error });
}
