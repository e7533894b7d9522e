import type { LlmCompletion, LlmStopReason, LlmStreamEvent, LlmToolCall, LlmUsage } from './port.js';

/** A streamed reply read to its end, as one completion. */
export async function collectCompletion(events: AsyncIterable<LlmStreamEvent>): Promise<LlmCompletion> {
  let text = '';
  const toolCalls: LlmToolCall[] = [];
  let stopReason: LlmStopReason = 'other';
  let usage: LlmUsage | undefined;
  for await (const event of events) {
    if (event.type === 'text') text += event.text;
    else if (event.type === 'tool_call') toolCalls.push(event.call);
    else {
      stopReason = event.stopReason;
      usage = event.usage;
    }
  }
  return { text, toolCalls, stopReason, usage };
}
