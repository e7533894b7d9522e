import { DEFAULT_AGENT_LANGUAGE, type Agent } from '../agents/entities.js';
import { providerWebhookUrl } from '../platform/webhook-urls.js';
import type { RelaySettings } from '../providers/telephony/port.js';

/** The provider asks this webhook what to do when a call's relay session ends (`<Connect action>`). */
export const RELAY_ENDED_PATH = '/webhooks/telephony/relay-ended' as const;

/** ElevenLabs (ConversationRelay's default text-to-speech) voice used when the agent names none. */
export const DEFAULT_VOICE_ID = 'UgBBYS2sOqTuMpoF3BR0';
const SPEED = { slow: '0.9', medium: '1.0', fast: '1.15' } as const;
/** ElevenLabs stability: lower is more varied and expressive. */
const STABILITY = { low: '0.8', natural: '0.5', expressive: '0.3' } as const;

/** The voice relay's WebSocket URL (the stack's WebSocket API; locally the local relay gateway). */
export function relayUrl(): string {
  const url = process.env.VOICE_RELAY_URL;
  if (!url) throw new Error('VOICE_RELAY_URL is not set for this function');
  return url;
}

/**
 * How the provider connects a call of this agent to the relay. Every agent setting that the provider
 * can honour goes here (docs/voice-runtime.md lists each setting and where it takes effect):
 * language; voice, with speech speed and expressiveness as ElevenLabs' speed and stability
 * (`<voice id>-flash_v2_5-<speed>_<stability>_<similarity>`) when the voice is an ElevenLabs id;
 * interruptible; specialised terms as speech-to-text hints.
 */
/** What of an agent the relay settings read. */
export type RelayAgent = Pick<Agent, 'language' | 'voice'> & {
  settings: Pick<Agent['settings'], 'speechSpeed' | 'expressiveness' | 'interruptible' | 'specialisedTerms'>;
};

/** An agent deleted after its call was placed: the call is connected with the defaults. */
export const DEFAULT_RELAY_AGENT: RelayAgent = {
  settings: { speechSpeed: 'medium', expressiveness: 'natural', interruptible: true, specialisedTerms: [] },
};

export function relaySettings(
  agent: RelayAgent,
  ids: { callId: string; workspaceId: string },
): RelaySettings {
  const voiceId = agent.voice ?? DEFAULT_VOICE_ID;
  const elevenLabs = /^[A-Za-z0-9]{20}$/.test(voiceId);
  const voice = elevenLabs
    ? `${voiceId}-flash_v2_5-${SPEED[agent.settings.speechSpeed]}_${STABILITY[agent.settings.expressiveness]}_0.8`
    : voiceId;
  const action = new URL(providerWebhookUrl(RELAY_ENDED_PATH));
  action.searchParams.set('call_id', ids.callId);
  action.searchParams.set('workspace_id', ids.workspaceId);
  return {
    url: relayUrl(),
    actionUrl: action.toString(),
    language: agent.language ?? DEFAULT_AGENT_LANGUAGE,
    ...(elevenLabs ? { ttsProvider: 'ElevenLabs' } : {}),
    voice,
    interruptible: agent.settings.interruptible,
    hints: agent.settings.specialisedTerms.map((term) => term.replace(/,/g, ' ').trim()).filter(Boolean),
  };
}
