/** The part of OpenAI's chat-completions request the model simulator reads. */

export interface ChatToolCall {
  id: string;
  type?: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string | ContentPart[] }
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content?: string | ContentPart[] | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; name?: string; content: string | ContentPart[] };

export interface ContentPart {
  type: string;
  text?: string;
}

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export interface ChatCompletionRequest {
  model?: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: ChatTool[];
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  response_format?:
    | { type: 'text' | 'json_object' }
    | {
        type: 'json_schema';
        json_schema: { name: string; schema?: Record<string, unknown>; strict?: boolean };
      };
}

/** A message's text (content parts joined). */
export function textOf(content: string | ContentPart[] | null | undefined): string {
  if (typeof content === 'string') return content;
  return Array.isArray(content)
    ? content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('')
    : '';
}

/** A request body the simulator can answer, or why not (a 400). */
export function readRequest(body: unknown): ChatCompletionRequest | string {
  if (typeof body !== 'object' || body === null) return 'The body must be a JSON object';
  const request = body as Partial<ChatCompletionRequest>;
  if (!Array.isArray(request.messages) || request.messages.length === 0)
    return "'messages' must be a non-empty array";
  for (const [i, message] of request.messages.entries()) {
    const role = (message as { role?: unknown })?.role;
    if (!['system', 'developer', 'user', 'assistant', 'tool'].includes(String(role)))
      return `messages[${i}].role is not one of system, developer, user, assistant, tool`;
    const content = (message as { content?: unknown }).content;
    if (content !== undefined && content !== null && typeof content !== 'string' && !Array.isArray(content))
      return `messages[${i}].content must be a string or an array of parts`;
  }
  if (request.tools !== undefined && !Array.isArray(request.tools)) return "'tools' must be an array";
  for (const [i, tool] of (request.tools ?? []).entries()) {
    if (typeof tool?.function?.name !== 'string') return `tools[${i}].function.name is required`;
  }
  return request as ChatCompletionRequest;
}
