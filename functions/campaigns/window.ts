import { countryOf } from '../platform/phone.js';
import { WEEKDAYS, type CallingWindow, type Weekday } from './model.js';

/**
 * The calling window in the recipient's local time. The recipient's zones are, first found: the
 * contact's timezone; the zone of its number's country (libphonenumber-js gives the country, the
 * platform's ICU data its zones: `Intl.Locale#timeZones`) — for a country of several zones the
 * workspace's when it is one of them, else all of them (the window must then be open in every one:
 * a number that could be in Perth or in Sydney is called when it is day in both); else the
 * workspace's. A window with a named IANA timezone ignores the recipient.
 *
 * `nextOpening` is null while the window is open in every zone, else the first instant it is
 * (searched over the next 8 days; DST handled by converting each zone's wall-clock opening to UTC).
 */

const formats = new Map<string, Intl.DateTimeFormat>();
function formatOf(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      weekday: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(timeZone, format);
  }
  return format;
}

interface LocalTime {
  year: number;
  month: number;
  day: number;
  weekday: Weekday;
  minutes: number;
  seconds: number;
}

function localTime(at: Date, timeZone: string): LocalTime {
  const parts: Record<string, string> = {};
  for (const part of formatOf(timeZone).formatToParts(at)) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    weekday: parts.weekday.toLowerCase().slice(0, 3) as Weekday,
    minutes: Number(parts.hour) * 60 + Number(parts.minute),
    seconds: Number(parts.second),
  };
}

/** The UTC instant of a wall-clock time in a zone (the later one when the clock goes back). */
function zonedInstant(year: number, month: number, day: number, minutes: number, timeZone: string): Date {
  const wall = Date.UTC(year, month - 1, day, 0, minutes);
  let guess = wall;
  for (let i = 0; i < 3; i += 1) {
    const local = localTime(new Date(guess), timeZone);
    const seen = Date.UTC(local.year, local.month - 1, local.day, 0, local.minutes, local.seconds);
    const next = guess + (wall - seen);
    if (next === guess) break;
    guess = next;
  }
  return new Date(guess);
}

const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

function hoursOn(window: CallingWindow, day: Weekday): { start: number; end: number } | undefined {
  if (!window.days.includes(day)) return undefined;
  const hours = window.day_hours?.[day] ?? { start: window.start, end: window.end };
  return { start: minutesOf(hours.start), end: minutesOf(hours.end) };
}

export function isOpenIn(window: CallingWindow, timeZone: string, at: Date): boolean {
  const local = localTime(at, timeZone);
  const hours = hoursOn(window, local.weekday);
  return hours !== undefined && local.minutes >= hours.start && local.minutes < hours.end;
}

/** The openings of the window in one zone from `from`'s local day on, for `days` days. */
function openingsIn(window: CallingWindow, timeZone: string, from: Date, days: number): Date[] {
  const start = localTime(from, timeZone);
  const openings: Date[] = [];
  for (let i = 0; i <= days; i += 1) {
    const date = new Date(Date.UTC(start.year, start.month - 1, start.day + i));
    const weekday = WEEKDAYS[date.getUTCDay()];
    const hours = hoursOn(window, weekday);
    if (!hours) continue;
    openings.push(
      zonedInstant(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), hours.start, timeZone),
    );
  }
  return openings;
}

/** Null while the window is open in every zone; else its next opening in all of them. */
export function nextOpening(window: CallingWindow, zones: string[], now: Date): Date | null {
  if (zones.every((zone) => isOpenIn(window, zone, now))) return null;
  const candidates = zones
    .flatMap((zone) => openingsIn(window, zone, now, 8))
    .filter((at) => at.getTime() > now.getTime())
    .sort((a, b) => a.getTime() - b.getTime());
  const common = candidates.find((at) => zones.every((zone) => isOpenIn(window, zone, at)));
  if (common) return common;
  // The zones' windows never overlap: the first zone's opening (the contact's most likely one).
  return openingsIn(window, zones[0], now, 8).find((at) => at.getTime() > now.getTime()) ?? null;
}

/**
 * Why a contact waits until `at`: "window opens 09:00 Australia/Perth" (the opening's local time in
 * the zone whose window opens then, with its weekday when it is not today there).
 */
export function windowOpening(window: CallingWindow, zones: string[], at: Date, now: Date): string {
  const zone =
    zones.find((z) => {
      const local = localTime(at, z);
      return hoursOn(window, local.weekday)?.start === local.minutes;
    }) ?? zones[0];
  const local = localTime(at, zone);
  const today = localTime(now, zone);
  const hhmm = `${String(Math.floor(local.minutes / 60)).padStart(2, '0')}:${String(local.minutes % 60).padStart(2, '0')}`;
  const sameDay = local.year === today.year && local.month === today.month && local.day === today.day;
  const day = sameDay ? '' : `${local.weekday[0].toUpperCase()}${local.weekday.slice(1)} `;
  return `window opens ${day}${hhmm} ${zone}`;
}

const countryZones = new Map<string, string[]>();
function zonesOfCountry(country: string): string[] {
  let zones = countryZones.get(country);
  if (!zones) {
    try {
      const locale = new Intl.Locale(`und-${country}`) as Intl.Locale & {
        timeZones?: string[];
        getTimeZones?: () => string[];
      };
      zones = locale.getTimeZones?.() ?? locale.timeZones ?? [];
    } catch {
      zones = [];
    }
    countryZones.set(country, zones);
  }
  return zones;
}

/** The zones a recipient may be in (see the top of this file). */
export function recipientZones(input: {
  window: CallingWindow;
  contactTimezone?: string;
  phone: string;
  workspaceTimezone: string;
}): string[] {
  if (input.window.timezone !== 'recipient') return [input.window.timezone];
  if (input.contactTimezone) return [input.contactTimezone];
  const country = countryOf(input.phone);
  const zones = country ? zonesOfCountry(country) : [];
  if (zones.length === 1) return zones;
  if (zones.includes(input.workspaceTimezone)) return [input.workspaceTimezone];
  if (zones.length > 1) return zones;
  return [input.workspaceTimezone];
}
