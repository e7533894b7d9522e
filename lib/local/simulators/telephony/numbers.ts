import { randomInt } from 'node:crypto';
import { requireString, SimulatorError } from '../http-kit.js';
import { sid, type SimState } from './state.js';

/** The simulator's numbers: provisioned in the Australian drama ranges (+61 2 5550 xxxx, +61 3 5550 xxxx). */

const DRAMA_NUMBER = /^\+61([23])5550(\d{4})$/;

export function provision(
  sim: SimState,
  body: Record<string, unknown>,
): { sid: string; phone_number: string } {
  if (body.country !== 'AU') throw new SimulatorError(400, 'only AU numbers are offered');
  const voiceUrl = requireString(body.voice_url, 'voice_url');
  const statusCallback = requireString(body.status_callback, 'status_callback');
  const inUse = new Set([...sim.numbers.values()].map((n) => n.phoneNumber));
  let phoneNumber: string | undefined;
  if (typeof body.phone_number === 'string') {
    if (!DRAMA_NUMBER.test(body.phone_number))
      throw new SimulatorError(400, 'the simulator offers +61 2 5550 xxxx and +61 3 5550 xxxx only');
    if (inUse.has(body.phone_number)) throw new SimulatorError(409, 'number already provisioned');
    phoneNumber = body.phone_number;
  } else {
    const areaCode = typeof body.area_code === 'string' ? body.area_code.replace(/^0/, '') : undefined;
    if (areaCode !== undefined && areaCode !== '2' && areaCode !== '3')
      throw new SimulatorError(400, `no numbers available in area code ${body.area_code}`);
    for (let tries = 0; tries < 50 && !phoneNumber; tries += 1) {
      const area = areaCode ?? (randomInt(2) === 0 ? '2' : '3');
      const candidate = `+61${area}5550${String(randomInt(10_000)).padStart(4, '0')}`;
      if (!inUse.has(candidate)) phoneNumber = candidate;
    }
    if (!phoneNumber) throw new SimulatorError(400, 'no numbers available');
  }
  const numberSid = sid('PN');
  sim.numbers.set(numberSid, { phoneNumber, voiceUrl, statusCallback });
  return { sid: numberSid, phone_number: phoneNumber };
}
