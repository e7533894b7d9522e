/**
 * How the simulator plays a call out, chosen by the called number (docs/api.md, "Local stack contract").
 * Times are simulated seconds from the dial (outbound) or from the answer (inbound); the server scales
 * them to wall-clock time with SIMULATOR_TIME_SCALE.
 */

export const SCENARIO_NUMBERS = {
  busy: '+61491570110',
  no_answer: '+61491570111',
  failed: '+61491570112',
  long: '+61491570113',
  duplicated: '+61491570114',
  /** Not in docs/api.md's table (an addition for fault tests): answered, then the provider never reports the end. */
  silent: '+61491570115',
  /** Answered; the simulator opens no relay session (an outside ConversationRelay client may); up until hung up or its limit. */
  external: '+61491570116',
  /** Answered by a machine: detection reports `machine_end_beep` 4 s after the answer; what is said after it is the voicemail. */
  machine: '+61491570117',
  /** Answered by a person after 2 s of silence: detection reports `human`; a normal conversation. */
  human_after_silence: '+61491570118',
  /** Answered; a transfer to it is answered by a person who hears the whisper first. */
  transfer_target: '+61491570119',
} as const;

/** When detection reports, in simulated seconds after the answer: a machine after its beep, a person sooner. */
export const AMD_MACHINE_SECONDS = 4;
export const AMD_HUMAN_SECONDS = 2;

export type Scenario = 'answered' | keyof typeof SCENARIO_NUMBERS;

export function scenarioFor(to: string): Scenario {
  for (const [scenario, number] of Object.entries(SCENARIO_NUMBERS)) {
    if (number === to) return scenario as Scenario;
  }
  return 'answered';
}

/** Simulated seconds of conversation (answer to hang-up) when nothing cuts the call short. */
export const CONVERSATION_SECONDS = 60;
export const LONG_CONVERSATION_SECONDS = 1800;
export const RING_SECONDS = 5;
/** A call the agent handed to a person (`<Dial>`) goes on this long with them. */
export const TRANSFER_SECONDS = 30;
export const NO_ANSWER_RING_SECONDS = 30;

/** One callback the simulator sends. */
export interface Step {
  /** Simulated seconds after the start. */
  at: number;
  kind: 'status' | 'recording';
  /** Twilio `CallStatus` (status steps), or `started` for the voice runtime's ConversationStatus. */
  status?:
    | 'initiated'
    | 'ringing'
    | 'in-progress'
    | 'started'
    | 'completed'
    | 'busy'
    | 'no-answer'
    | 'failed'
    | 'canceled';
  /** Fired together with the step before it instead of after it (duplicates racing the original). */
  concurrent?: boolean;
  duplicate?: boolean;
}

/**
 * The call progress events a status callback may be asked for (Twilio's `StatusCallbackEvent`), and
 * the one each status step belongs to: `answered` is the answer (`in-progress`), `completed` every end.
 * The voice runtime's `started` is no call progress event: it is always sent.
 */
export const STATUS_EVENTS = ['initiated', 'ringing', 'answered', 'completed'] as const;
export type StatusEvent = (typeof STATUS_EVENTS)[number];

export function eventOf(status: Step['status']): StatusEvent | undefined {
  switch (status) {
    case 'initiated':
    case 'ringing':
      return status;
    case 'in-progress':
      return 'answered';
    case 'started':
    case undefined:
      return undefined;
    default:
      return 'completed';
  }
}

/** Whether a step is sent when the call's status callback asked for `events` (recordings always are). */
export function isSent(step: Pick<Step, 'kind' | 'status'>, events: readonly StatusEvent[]): boolean {
  if (step.kind !== 'status') return true;
  const event = eventOf(step.status);
  return event === undefined || events.includes(event);
}

export interface Timeline {
  steps: Step[];
  /** Seconds from the answer to the end; 0 when never answered. */
  talkSeconds: number;
  /** When the call is answered (simulated seconds), if it is. */
  answerAt?: number;
}

/**
 * The callbacks of an outbound call. `timeLimit` ends a longer conversation (Twilio's `timeLimit`);
 * `events`: the status callback's events (Twilio's `StatusCallbackEvent`; default every one) — like
 * Twilio, the simulator sends no status callback for the others (nor their duplicates).
 */
export function outboundTimeline(
  scenario: Scenario,
  options: { timeLimit: number; record: boolean; events?: readonly StatusEvent[] },
): Timeline {
  const timeline = playedTimeline(scenario, options);
  const events = options.events ?? STATUS_EVENTS;
  const sent = timeline.steps.filter((step) => isSent(step, events));
  return { ...timeline, steps: scenario === 'duplicated' ? duplicatedOutOfOrder(sent) : sent };
}

function playedTimeline(scenario: Scenario, options: { timeLimit: number; record: boolean }): Timeline {
  switch (scenario) {
    case 'busy':
      return { talkSeconds: 0, steps: [status(0, 'initiated'), status(1, 'ringing'), status(4, 'busy')] };
    case 'no_answer':
      return {
        talkSeconds: 0,
        steps: [
          status(0, 'initiated'),
          status(1, 'ringing'),
          status(1 + NO_ANSWER_RING_SECONDS, 'no-answer'),
        ],
      };
    case 'failed':
      return { talkSeconds: 0, steps: [status(0, 'initiated'), status(1, 'failed')] };
    // An outside relay client talks (or nobody): the call is up until it is hung up (silent: the
    // provider never reports the end; external: the same, with the relay left to someone else).
    case 'silent':
    case 'external':
      return {
        // A hang-up bills what was talked up to it (silent: nothing, as before).
        talkSeconds: scenario === 'external' ? Math.max(1, options.timeLimit) : 0,
        answerAt: RING_SECONDS,
        steps: [
          status(0, 'initiated'),
          status(1, 'ringing'),
          status(RING_SECONDS, 'in-progress'),
          status(RING_SECONDS + 1, 'started'),
        ],
      };
    case 'long':
    case 'answered':
    case 'machine':
    case 'human_after_silence':
    case 'transfer_target':
    case 'duplicated': {
      const wanted = scenario === 'long' ? LONG_CONVERSATION_SECONDS : CONVERSATION_SECONDS;
      const talk = Math.max(1, Math.min(wanted, options.timeLimit));
      const answerAt = RING_SECONDS;
      const steps: Step[] = [
        status(0, 'initiated'),
        status(1, 'ringing'),
        status(answerAt, 'in-progress'),
        status(answerAt + 1, 'started'),
        status(answerAt + talk, 'completed'),
      ];
      if (options.record) steps.push({ at: answerAt + talk + 1, kind: 'recording' });
      return { talkSeconds: talk, answerAt, steps };
    }
  }
}

/** An inbound call we accepted: answered at once, then the same conversation. */
export function inboundTimeline(options: { timeLimit: number; record: boolean }): Timeline {
  const talk = Math.max(1, Math.min(CONVERSATION_SECONDS, options.timeLimit));
  const steps: Step[] = [status(0, 'in-progress'), status(1, 'started'), status(talk, 'completed')];
  if (options.record) steps.push({ at: talk + 1, kind: 'recording' });
  return { talkSeconds: talk, answerAt: 0, steps };
}

/**
 * Every callback twice, out of order: each one is sent again late, racing the callback after it
 * (so `ringing` arrives after `initiated`'s duplicate, `started` again after `completed`, …).
 */
export function duplicatedOutOfOrder(steps: Step[]): Step[] {
  const out: Step[] = [];
  steps.forEach((step, i) => {
    out.push(step);
    const previous = steps[i - 1];
    if (previous) out.push({ ...previous, at: step.at, concurrent: true, duplicate: true });
  });
  const last = steps[steps.length - 1];
  out.push({ ...last, concurrent: false, duplicate: true });
  return out;
}

function status(at: number, value: NonNullable<Step['status']>): Step {
  return { at, kind: 'status', status: value };
}
