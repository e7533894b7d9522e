import * as z from 'zod';
import { schemaOnFirstUse } from '../../platform/first-use.js';
import { BedrockLanguageModel } from './bedrock.js';
import { OpenAiLanguageModel } from './openai.js';
import type { LanguageModelPort } from './port.js';

export * from './port.js';

/**
 * Bedrock's default model: Amazon Nova Lite, fast to its first token, with tool use and a forced tool
 * (structured output) in ConverseStream, served on demand under this id in us-east-1 (elsewhere name
 * a cross-region inference profile, e.g. `eu.amazon.nova-lite-v1:0`, in CDK context `llmModel`).
 */
export const DEFAULT_BEDROCK_MODEL = 'amazon.nova-lite-v1:0';
/** The OpenAI adapter's defaults when nothing is set (the local stack always sets LLM_BASE_URL). */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';

/** A voice turn that has not started to speak after this long has lost the caller. */
export const DEFAULT_FIRST_TOKEN_TIMEOUT_MS = 8_000;
/** A whole request, inside API Gateway's 29 s integration timeout. */
export const DEFAULT_TIMEOUT_MS = 25_000;

const LlmConfig = schemaOnFirstUse(() =>
  z.object({
    STAGE: z.enum(['local', 'cloud']).default('local'),
    LLM_PROVIDER: z.enum(['bedrock', 'openai']).optional(),
    LLM_MODEL: z.string().min(1).optional(),
    LLM_BASE_URL: z.url().optional(),
    LLM_API_KEY: z.string().min(1).optional(),
    LLM_FIRST_TOKEN_TIMEOUT_MS: z.coerce.number().int().positive().default(DEFAULT_FIRST_TOKEN_TIMEOUT_MS),
    LLM_TIMEOUT_MS: z.coerce.number().int().positive().default(DEFAULT_TIMEOUT_MS),
  }),
);

/** Empty variables count as unset (`LLM_BASE_URL=` in a shell). */
function setVariables(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(([, v]) => v !== undefined && v !== ''),
  ) as Record<string, string>;
}

let port: LanguageModelPort | undefined;

/**
 * The configured model, built once per container: `LLM_PROVIDER` = `bedrock` (the cloud's default;
 * `LLM_MODEL`, else DEFAULT_BEDROCK_MODEL) or `openai` (the local default: `LLM_BASE_URL`,
 * `LLM_MODEL`, `LLM_API_KEY`). Every request ends at `LLM_FIRST_TOKEN_TIMEOUT_MS` without a first
 * token, at `LLM_TIMEOUT_MS` in all, or when the caller's signal aborts it.
 */
export function languageModel(): LanguageModelPort {
  if (!port) {
    const env = LlmConfig.parse(setVariables());
    const timeouts = { firstTokenMs: env.LLM_FIRST_TOKEN_TIMEOUT_MS, totalMs: env.LLM_TIMEOUT_MS };
    const provider = env.LLM_PROVIDER ?? (env.STAGE === 'local' ? 'openai' : 'bedrock');
    port =
      provider === 'bedrock'
        ? new BedrockLanguageModel({ model: env.LLM_MODEL ?? DEFAULT_BEDROCK_MODEL, timeouts })
        : new OpenAiLanguageModel({
            baseUrl: env.LLM_BASE_URL ?? DEFAULT_OPENAI_BASE_URL,
            model: env.LLM_MODEL ?? DEFAULT_OPENAI_MODEL,
            apiKey: env.LLM_API_KEY,
            timeouts,
          });
  }
  return port;
}

/** Replace the model (tests); `undefined` goes back to the configured one, read again from the environment. */
export function setLanguageModel(next: LanguageModelPort | undefined): void {
  port = next;
}
