import type { Agent } from '../agents/entities.js';
import type { Call } from './entities.js';
import type { RelayAgent } from './relay-settings.js';

/**
 * What dialling a call needs of its agent, copied onto the call when it is created (the call's `dial`,
 * entities.ts): start-call and the campaign dialer already hold the agent's version the call runs, so
 * the dispatcher (dispatch.ts) dials without reading the agent or its version again. The voicemail
 * action and message the call keeps for answering-machine detection are set with the call too
 * (`voicemailActionOf`).
 */
export type DialSettings = NonNullable<Call['dial']>;

export function dialSettingsOf(agent: Agent): DialSettings {
  const { settings } = agent;
  return {
    ...(agent.language !== undefined ? { language: agent.language } : {}),
    ...(agent.voice !== undefined ? { voice: agent.voice } : {}),
    speechSpeed: settings.speechSpeed,
    expressiveness: settings.expressiveness,
    interruptible: settings.interruptible,
    specialisedTerms: [...settings.specialisedTerms],
    ...(agent.voicemail?.detection
      ? { machineDetection: agent.voicemail.action === 'leave_message' ? 'DetectMessageEnd' : 'Enable' }
      : {}),
    ...(settings.conversationMemories ? { memories: true } : {}),
  };
}

/** The relay settings' agent (relay-settings.ts) from what the call keeps. */
export function relayAgentOf(dial: DialSettings): RelayAgent {
  return {
    ...(dial.language !== undefined ? { language: dial.language } : {}),
    ...(dial.voice !== undefined ? { voice: dial.voice } : {}),
    settings: {
      speechSpeed: dial.speechSpeed,
      expressiveness: dial.expressiveness,
      interruptible: dial.interruptible,
      specialisedTerms: dial.specialisedTerms ?? [],
    },
  };
}
