import type { IncomingMessage, ServerResponse } from 'node:http';
import { readJsonObject, requireString, routeTable, sendJson, SimulatorError } from '../http-kit.js';
import { callResource, hangup, inbound, newCall, relayEndedOutside, startPlaying } from './calls.js';
import { provision } from './numbers.js';
import { STATUS_EVENTS, type StatusEvent } from './scenarios.js';
import { scaleOf, talkedSoFar, type SimCall, type SimState } from './state.js';

/**
 * A placed call's `status_callback_event` (Twilio's `StatusCallbackEvent`): the events its status
 * callback is sent for. Absent, only the end (`completed`), as Twilio does; an unknown event is 400.
 */
function statusEventsOf(value: unknown): StatusEvent[] {
  if (value === undefined || value === null) return ['completed'];
  const list = Array.isArray(value) ? (value as unknown[]) : [value];
  for (const event of list) {
    if (!STATUS_EVENTS.includes(event as StatusEvent))
      throw new SimulatorError(400, `status_callback_event: unknown event ${JSON.stringify(event)}`);
  }
  return list as StatusEvent[];
}

/** The simulator's REST API (server.ts lists it): a recording's audio without auth, the rest with it. */

const knownCall = (sim: SimState, callSid: string): SimCall => {
  const call = sim.calls.get(callSid);
  if (!call) throw new SimulatorError(404, 'call not found');
  return call;
};

export function telephonyRoutes(
  sim: SimState,
): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> {
  const open = routeTable([
    {
      method: 'GET',
      path: '/recordings/:sid',
      handle: ({ res, params }) => {
        const recording = sim.recordings.get(params.sid.replace(/\.wav$/, ''));
        if (!recording || recording.expires < Date.now())
          return sendJson(res, 404, { error: 'recording not found' });
        res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': recording.wav.length });
        res.end(recording.wav);
      },
    },
  ]);

  const authorised = routeTable([
    {
      method: 'POST',
      path: '/numbers',
      handle: async ({ req, res }) => sendJson(res, 201, provision(sim, await readJsonObject(req))),
    },
    {
      method: 'DELETE',
      path: '/numbers/:sid',
      handle: ({ res, params }) => {
        sim.numbers.delete(params.sid); // releasing an unknown number is not an error (idempotent)
        sendJson(res, 204);
      },
    },
    {
      method: 'POST',
      path: '/calls',
      handle: async ({ req, res }) => {
        const body = await readJsonObject(req);
        const timeLimit =
          typeof body.time_limit === 'number' && body.time_limit > 0 ? body.time_limit : 4 * 3600;
        const call = newCall(sim, {
          from: requireString(body.from, 'from'),
          to: requireString(body.to, 'to'),
          direction: 'outbound-api',
          statusCallback: requireString(body.status_callback, 'status_callback'),
          statusEvents: statusEventsOf(body.status_callback_event),
          twiml: requireString(body.twiml, 'twiml'),
          timeLimit,
          ...((body.machine_detection === 'DetectMessageEnd' || body.machine_detection === 'Enable') &&
          typeof body.async_amd_status_callback === 'string'
            ? { amd: { mode: body.machine_detection, callbackUrl: body.async_amd_status_callback } }
            : {}),
        });
        startPlaying(sim, call);
        sendJson(res, 201, { sid: call.sid });
      },
    },
    {
      method: 'GET',
      path: '/calls',
      handle: ({ res, url }) => {
        const callId = url.searchParams.get('call_id');
        const matching = [...sim.calls.values()].filter((c) => callId !== null && c.callId === callId);
        sendJson(res, 200, {
          items: matching.map((c) => ({
            sid: c.sid,
            to: c.to,
            from: c.from,
            finished: c.finished,
            hung_up: c.hungUp,
          })),
        });
      },
    },
    {
      method: 'POST',
      path: '/calls/:sid/hangup',
      handle: async ({ res, params }) => sendJson(res, 200, await hangup(sim, knownCall(sim, params.sid))),
    },
    {
      method: 'POST',
      path: '/calls/:sid/relay-ended',
      handle: async ({ res, params }) =>
        sendJson(res, 200, await relayEndedOutside(sim, knownCall(sim, params.sid))),
    },
    {
      method: 'GET',
      path: '/calls/:sid',
      handle: ({ res, params }) => {
        const call = knownCall(sim, params.sid);
        sendJson(res, 200, {
          ...callResource(sim, call),
          sid: call.sid,
          from: call.from,
          to: call.to,
          direction: call.direction,
          finished: call.finished,
          hung_up: call.hungUp,
          // Not Twilio's: the call's seconds per wall-clock second (1 for a call a person holds).
          time_scale: scaleOf(sim, call),
          talk_seconds: call.timeline.talkSeconds,
          // Not Twilio's: the simulated seconds talked so far (0 before the answer).
          talked_seconds: call.timeline.answerAt === undefined ? 0 : talkedSoFar(sim, call),
          transcript: call.transcript,
          dialled: call.dialled ?? null,
          answered_by: call.amd?.reported ?? null,
          said: call.said,
          relay_end: call.relayEnd ?? null,
          transfer: call.transfer ?? null,
          callbacks: call.callbacks,
        });
      },
    },
    {
      method: 'POST',
      path: '/inbound',
      handle: async ({ req, res }) => {
        const body = await readJsonObject(req);
        const says = (Array.isArray(body.says) ? body.says : [body.says]).filter(
          (line): line is string => typeof line === 'string' && line.trim() !== '',
        );
        const from = requireString(body.from, 'from');
        const to = requireString(body.to, 'to');
        sendJson(res, 201, await inbound(sim, from, to, says, body.external_relay === true));
      },
    },
  ]);

  return async (req, res, url) => {
    if (await open(req, res, url)) return;
    if (req.headers.authorization !== `Bearer ${sim.options.authToken}`)
      return sendJson(res, 401, { error: 'bad credentials' });
    if (await authorised(req, res, url)) return;
    sendJson(res, 404, { error: 'not found' });
  };
}
