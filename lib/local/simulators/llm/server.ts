import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readRequest, textOf, type ChatCompletionRequest } from './protocol.js';
import { countWords, simulateReply, type SimulatedReply } from './replies.js';
import {
  answerStructured as defaultAnswerStructured,
  INVALID_STRUCTURED_CONTENT,
  StructuredFault,
  type AnswerStructured,
} from './structured.js';

/**
 * The local model simulator: an OpenAI-compatible chat-completions server, so the voice runtime, the
 * post-call analysis and the evaluations talk to it through the same adapter as to OpenAI, Ollama or
 * vLLM (functions/providers/llm/openai.ts). Deterministic: the same request gets the same reply.
 *
 *   POST /v1/chat/completions   streamed (`stream: true`: SSE `data: {chunk}` lines, a word a chunk,
 *                               tool calls with their arguments in fragments, a usage chunk, then
 *                               `data: [DONE]`) or whole; `usage` always filled (a token a word)
 *   GET  /v1/models             the one model, `simulator` (any `model` name is accepted)
 *   GET  /requests              the last 200 chat-completions requests as received (local only: a
 *                               test asserts on what the service sent the model, not on the echo)
 *
 * What it answers, first rule that applies, from the last message:
 *  a. Tool results are last (after the assistant's tool calls): it speaks from them.
 *     `search_knowledge` → the top hit, as the agent speaks of a listing ("That's 12 Harbour Street,
 *     Manly NSW 2095: it is available, listed at $1,250,000. It has 3 bedrooms and 2 bathrooms.") or
 *     of a document ("From "<title>": <passage>"); no hit → "I'm sorry, I couldn't find anything on
 *     that, but I can have someone follow up with you.". `transfer_call` → "Please hold while I
 *     connect you."; `end_call` → "Goodbye!"; any other tool → "All right, that's done."; a result
 *     with an `error` → "I'm sorry, I couldn't look that up just now.".
 *  j. An agent taking the call over (the system prompt's `## You are taking over this call`, the
 *     caller silent since the line it quotes) → `Hi, this is <name>. You said: "<line>" — I can help
 *     with that.` (handoffs.ts).
 *  Otherwise from the last user message (the caller's line):
 *  b. Goodbye (bye, goodbye, that's all, hang up, end the call) and `end_call` is offered →
 *     "Thank you for calling. Goodbye!" and the tool call `end_call {"reason":"caller said goodbye"}`.
 *  k. A target of the offered `handoff_to_agent` named, or asked for in words of its description →
 *     "Let me put you through to <name>." and `handoff_to_agent {agent_id, reason, summary}` (handoffs.ts).
 *  c. A person (speak/talk to a person, human, someone, manager, agent; transfer me; a real person)
 *     and `transfer_call` is offered → "Let me transfer you now." and `transfer_call {"reason":…}`.
 *  e. (before d: the agent knows the listing it calls about) From the prompt's facts (h): the price
 *     (price, how much, cost) when they hold an amount ($…) → "It is listed at $1,250,000.", or "The
 *     property at <address> is listed at …" when they have an address after "at"; what the call is
 *     about → "I'm calling about the property at <address>, listed at …"; which property, where → "It's
 *     the property at <address>, listed at …".
 *  d. A property (a word such as listing, house, street, bedrooms, price; an address; "in Bondi"):
 *     `search_knowledge` offered → the tool call `search_knowledge {"query":"<the line>"}`, no text;
 *     else the fact sharing a particular word with the line (a suburb, a street; not "any", "homes"),
 *     or the "I don't have that information" reply.
 *  f. A key press, as the voice runtime words it (`The caller pressed the key "5".`) → "You pressed 5.".
 *  g. Only a greeting (hi, hello, hey, good morning…) → "Hello! How can I help you today?".
 *  h. Else the fact of the system prompt sharing the most words with the line, or "I'm sorry, I
 *     don't have that information, but I can have someone follow up with you.". Its facts
 *     (wording.ts promptSentences): its sentences but "You are …" ones and instructions (an order is
 *     dropped, an ordering clause after a colon cut off), without the framing meant for the agent
 *     ("On a call to … about a listing, "), never one with a hole where a parameter was empty.
 * Structured output (`response_format: {type: "json_schema"}`): the content is
 * structured.ts's `answerStructured(request)`: post-call analysis (`call_analysis`), evaluation
 * judging (`evaluation_judgement`) and a warm transfer's summary (`transfer_summary`) by documented
 * rules (their triggers: "simulate an analysis error" → 500, "simulate invalid analysis" → content
 * that is not JSON, "simulate a judge error" → 500, "simulate a summary error" → 500), any other
 * schema a value valid for it.
 *
 * Test triggers, anywhere in the caller's line (before the rules above):
 *  - "tell me everything" → a 62-word reply, each chunk LLM_SIMULATOR_CHUNK_DELAY_MS (default 40)
 *    after the last, so a test can interrupt it mid-way;
 *  - "simulate a model error" → HTTP 500 `{error: {message, type: "server_error"}}`;
 *  - "simulate a broken stream" → a few chunks, then the connection is destroyed (no finish, no
 *    [DONE]; a whole answer: destroyed at once);
 *  - "simulate a slow model" → the first chunk (or the whole answer) after LLM_SIMULATOR_SLOW_MS
 *    (default 3000).
 * Other replies stream at once (a chunk per word, no delay).
 */

export interface LlmSimulatorOptions {
  port?: number;
  /** Between chunks of the "tell me everything" reply; default LLM_SIMULATOR_CHUNK_DELAY_MS or 40. */
  chunkDelayMs?: number;
  /** Before the first chunk of "simulate a slow model"; default LLM_SIMULATOR_SLOW_MS or 3000. */
  slowMs?: number;
  /** Structured output (post-call analysis and judging may bring rules of their own). */
  answerStructured?: AnswerStructured;
}

export interface LlmSimulator {
  url: string;
  port: number;
  /** The chat-completions requests received, oldest first (the last 200). */
  requests(): ChatCompletionRequest[];
  stop(): Promise<void>;
}

export const SIMULATOR_MODEL = 'simulator';
const MAX_BODY = 5 * 1024 * 1024;
const KEEP_REQUESTS = 200;
/** Chunks sent before "simulate a broken stream" cuts the connection. */
const CHUNKS_BEFORE_BREAK = 4;
/** Tool-call arguments are sent in fragments this long (split anywhere, as real servers do). */
const FRAGMENT = 7;

const envNumber = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return process.env[name] !== undefined && process.env[name] !== '' && Number.isFinite(value) && value >= 0
    ? value
    : fallback;
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new HttpError(413, 'The request body is too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new HttpError(400, 'The body is not JSON'));
      }
    });
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const errorBody = (message: string, type: string) => ({ error: { message, type, param: null, code: null } });

interface Answer {
  text: string;
  toolCalls: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  finish: 'stop' | 'tool_calls';
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

function answerOf(
  request: ChatCompletionRequest,
  reply: SimulatedReply,
  structured: AnswerStructured,
): Answer {
  const format = request.response_format?.type;
  const text =
    format === 'json_schema'
      ? structuredText(request, structured)
      : format === 'json_object'
        ? JSON.stringify({ text: reply.text })
        : reply.text;
  const toolCalls =
    format === 'json_schema' || format === 'json_object'
      ? []
      : reply.toolCalls.map((call, i) => ({
          id: `call_sim_${request.messages.length}_${i}`,
          type: 'function' as const,
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        }));
  const prompt = request.messages.reduce((sum, m) => sum + countWords(textOf(m.content)), 0);
  const completion =
    countWords(text) + toolCalls.reduce((sum, c) => sum + countWords(c.function.arguments), 0);
  return {
    text,
    toolCalls,
    finish: toolCalls.length > 0 ? 'tool_calls' : 'stop',
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

/** The structured answer's content; an `invalid` fault answers text that is not JSON. */
function structuredText(request: ChatCompletionRequest, structured: AnswerStructured): string {
  try {
    return JSON.stringify(structured(request));
  } catch (error) {
    if (error instanceof StructuredFault && error.fault === 'invalid') return INVALID_STRUCTURED_CONTENT;
    throw error;
  }
}

/** The answer as chat.completion.chunk deltas, in order. */
function chunksOf(answer: Answer): Record<string, unknown>[] {
  const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const chunks: Record<string, unknown>[] = [choice({ role: 'assistant', content: '' })];
  for (const word of answer.text.match(/\s*\S+/g) ?? []) chunks.push(choice({ content: word }));
  for (const [index, call] of answer.toolCalls.entries()) {
    chunks.push(
      choice({
        tool_calls: [
          { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
        ],
      }),
    );
    const args = call.function.arguments;
    for (let at = 0; at < args.length; at += FRAGMENT) {
      chunks.push(
        choice({ tool_calls: [{ index, function: { arguments: args.slice(at, at + FRAGMENT) } }] }),
      );
    }
  }
  chunks.push(choice({}, answer.finish));
  chunks.push({ choices: [], usage: answer.usage });
  return chunks;
}

export async function startLlmSimulator(options: LlmSimulatorOptions = {}): Promise<LlmSimulator> {
  const chunkDelayMs = options.chunkDelayMs ?? envNumber('LLM_SIMULATOR_CHUNK_DELAY_MS', 40);
  const slowMs = options.slowMs ?? envNumber('LLM_SIMULATOR_SLOW_MS', 3000);
  const structured = options.answerStructured ?? defaultAnswerStructured;
  const received: ChatCompletionRequest[] = [];
  let completions = 0;

  /** Waits `ms`, or less when the client went away (then false). */
  const pause = (res: ServerResponse, ms: number): Promise<boolean> =>
    new Promise((resolve) => {
      if (res.destroyed) return resolve(false);
      const done = (ok: boolean) => {
        if (timer) clearTimeout(timer);
        else clearImmediate(immediate);
        res.off('close', gone);
        resolve(ok);
      };
      const gone = () => done(false);
      const timer = ms > 0 ? setTimeout(() => done(true), ms) : undefined;
      const immediate = ms > 0 ? undefined : setImmediate(() => done(true));
      res.once('close', gone);
    });

  async function complete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = readRequest(await readBody(req));
    if (typeof parsed === 'string') throw new HttpError(400, parsed);
    const request = parsed;
    received.push(request);
    if (received.length > KEEP_REQUESTS) received.shift();
    const reply = simulateReply(request);
    if (reply.fault === 'error')
      return sendJson(
        res,
        500,
        errorBody('The model simulator failed, as asked (simulate a model error)', 'server_error'),
      );
    let answer: Answer;
    try {
      answer = answerOf(request, reply, structured);
    } catch (error) {
      if (!(error instanceof StructuredFault)) throw error;
      return sendJson(
        res,
        500,
        errorBody('The model simulator failed, as asked (a structured-output trigger)', 'server_error'),
      );
    }
    completions += 1;
    const head = {
      id: `chatcmpl-sim-${completions}`,
      created: Math.floor(Date.now() / 1000),
      model: request.model || SIMULATOR_MODEL,
    };
    if (!request.stream) {
      if (reply.fault === 'broken') return void res.socket?.destroy();
      if (reply.slow && !(await pause(res, slowMs))) return;
      return sendJson(res, 200, {
        ...head,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: answer.text === '' && answer.toolCalls.length > 0 ? null : answer.text,
              ...(answer.toolCalls.length > 0 ? { tool_calls: answer.toolCalls } : {}),
              refusal: null,
            },
            logprobs: null,
            finish_reason: answer.finish,
          },
        ],
        usage: answer.usage,
      });
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    res.flushHeaders();
    if (reply.slow && !(await pause(res, slowMs))) return;
    for (const [i, chunk] of chunksOf(answer).entries()) {
      if (reply.fault === 'broken' && i === CHUNKS_BEFORE_BREAK) return void res.socket?.destroy();
      // Unpaced, the answer is written at once: a pause per chunk, however short, waits a turn of this
      // process's event loop, and under load that spreads the reply over its other work.
      const paced = reply.paced || reply.fault === 'broken';
      if (i > 0 && paced && !(await pause(res, reply.paced ? chunkDelayMs : 0))) return;
      res.write(`data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', ...chunk })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '');
    const handle = async () => {
      if (req.method === 'POST' && path === '/v1/chat/completions') return complete(req, res);
      if (req.method === 'GET' && path === '/requests') return sendJson(res, 200, { requests: received });
      if (req.method === 'GET' && path === '/v1/models')
        return sendJson(res, 200, {
          object: 'list',
          data: [{ id: SIMULATOR_MODEL, object: 'model', created: 0, owned_by: 'local-simulator' }],
        });
      throw new HttpError(404, `No route ${req.method} ${path}`);
    };
    handle().catch((error: unknown) => {
      if (res.headersSent) return void res.destroy();
      const status = error instanceof HttpError ? error.status : 500;
      const message = error instanceof Error ? error.message : String(error);
      sendJson(res, status, errorBody(message, status >= 500 ? 'server_error' : 'invalid_request_error'));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests: () => [...received],
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
