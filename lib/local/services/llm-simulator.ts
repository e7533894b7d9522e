import { startLlmSimulator, SIMULATOR_MODEL, type LlmSimulator } from '../simulators/llm/server.js';
import { registerLocalService } from '../services.js';

/**
 * The language model of the local stack: the model simulator (lib/local/simulators/llm/server.ts,
 * OpenAI-compatible, deterministic; docs/language-model.md), unless LLM_BASE_URL names a server of
 * your own (Ollama, vLLM, llama.cpp, OpenAI): then the handlers use that one, with your LLM_MODEL and
 * LLM_API_KEY, and no simulator starts.
 */
let simulator: LlmSimulator | undefined;

const given = (name: string): string | undefined => {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
};

registerLocalService({
  name: 'language-model',
  async start() {
    const baseUrl = given('LLM_BASE_URL');
    if (baseUrl) {
      const model = given('LLM_MODEL');
      const apiKey = given('LLM_API_KEY');
      return {
        url: baseUrl,
        env: {
          LLM_PROVIDER: 'openai',
          LLM_BASE_URL: baseUrl,
          ...(model ? { LLM_MODEL: model } : {}),
          ...(apiKey ? { LLM_API_KEY: apiKey } : {}),
        },
        description: `your OpenAI-compatible server (LLM_BASE_URL), model ${model ?? 'not set: LLM_MODEL'}`,
      };
    }
    simulator = await startLlmSimulator();
    return {
      url: `${simulator.url}/v1`,
      port: simulator.port,
      env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: `${simulator.url}/v1`, LLM_MODEL: SIMULATOR_MODEL },
      description: 'language-model simulator, OpenAI-compatible, deterministic (LLM_BASE_URL=… for your own)',
    };
  },
  async stop() {
    await simulator?.stop();
    simulator = undefined;
  },
});
