// Opening hours: open_now, next_open and next_close at an instant, in the listing's own IANA
// time zone, with split days, periods past midnight, 24/7 and special days (holidays).
//
// The rule, which the SQL filter (`open_now` in search/sql.ts) applies identically: a special day
// replaces the regular hours within its own local calendar day (00:00 to 24:00), and its own
// periods may run past midnight into the next day. Every other local day is open when the
// regular week is open at that local wall-clock time (minute of the week), which includes the
// tail of a period that opened the evening before.
import { LRUCache } from 'lru-cache';
import type { OpeningHours, OpeningPeriod, SpecialDay } from '../../generated/directory/client/types.gen.ts';

/** Hours as stored: everything of OpeningHours but what depends on the time of the request. */
export interface StoredHours {
  time_zone: string;
  periods: OpeningPeriod[];
  weekday_text: OpeningHours['weekday_text'];
  /** Every special day known, past ones included; responses show the next 90 days. */
  special_days: SpecialDay[];
}

export const MINUTES_PER_WEEK = 7 * 1440;
const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

const hhmm = (t: string) => Number(t.slice(0, 2)) * 60 + Number(t.slice(2, 4));

export function isAroundTheClock(periods: readonly OpeningPeriod[]): boolean {
  return periods.length === 1 && periods[0]?.close === null;
}

/** The regular week as half-open [start, end) minutes of the week, Sunday 00:00 = 0, sorted and merged. */
export function weekIntervals(periods: readonly OpeningPeriod[]): [number, number][] {
  if (isAroundTheClock(periods)) return [[0, MINUTES_PER_WEEK]];
  const raw: [number, number][] = [];
  for (const p of periods) {
    if (!p.close) continue;
    const start = p.open.day * 1440 + hhmm(p.open.time);
    let end = p.close.day * 1440 + hhmm(p.close.time);
    if (end <= start) end += MINUTES_PER_WEEK; // wraps past Saturday night
    if (end > MINUTES_PER_WEEK) {
      raw.push([start, MINUTES_PER_WEEK], [0, end - MINUTES_PER_WEEK]);
    } else raw.push([start, end]);
  }
  return mergeIntervals(raw);
}

function mergeIntervals<T extends [number, number]>(intervals: T[]): T[] {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  const out: T[] = [];
  for (const iv of sorted) {
    const last = out.at(-1);
    if (last && iv[0] <= last[1]) last[1] = Math.max(last[1], iv[1]);
    else out.push([iv[0], iv[1]] as T);
  }
  return out;
}

// --- time zone arithmetic with Intl only ---------------------------------------------------

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export function localParts(instantMs: number, timeZone: string): LocalParts {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(instantMs))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year ?? 1970,
    month: parts.month ?? 1,
    day: parts.day ?? 1,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
  };
}

// Offsets only change at transitions, which fall on quarter hours: cache by quarter hour.
const QUARTER_HOUR = 15 * 60_000;
const offsets = new LRUCache<string, number>({ max: 200_000 });

/** The zone's offset from UTC at an instant, in minutes (Berlin in winter: 60). */
export function offsetMinutes(instantMs: number, timeZone: string): number {
  const bucket = Math.floor(instantMs / QUARTER_HOUR);
  const key = `${timeZone}|${bucket}`;
  const cached = offsets.get(key);
  if (cached !== undefined) return cached;
  const at = bucket * QUARTER_HOUR;
  const p = localParts(at, timeZone);
  const offset = Math.round((Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - at) / 60000);
  offsets.set(key, offset);
  return offset;
}

/** The instant of a local date and minute of the day; a time skipped by DST maps past the gap. */
export function localToInstant(date: string, minuteOfDay: number, timeZone: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const guess = Date.UTC(y, m - 1, d) + minuteOfDay * 60000;
  const first = guess - offsetMinutes(guess, timeZone) * 60000;
  // a second pass settles times near a transition; in a DST gap this lands past the gap
  return guess - offsetMinutes(first, timeZone) * 60000;
}

export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

export function localDate(instantMs: number, timeZone: string): string {
  const p = localParts(instantMs, timeZone);
  return `${p.year}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
}

function dayOfWeek(date: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d)).getUTCDay();
}

/** An instant as RFC 3339 with the zone's offset: `2026-11-20T12:00:00+01:00`. */
export function formatInZone(instantMs: number, timeZone: string): string {
  const p = localParts(instantMs, timeZone);
  const off = offsetMinutes(instantMs, timeZone);
  const sign = off < 0 ? '-' : '+';
  const abs = Math.abs(off);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${p.year}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

// --- opening intervals as instants -----------------------------------------------------------

/** The open intervals (absolute ms) that belong to one local date under the rule above. */
export function intervalsOfDay(
  hours: StoredHours,
  date: string,
  week = weekIntervals(hours.periods),
): [number, number][] {
  const tz = hours.time_zone;
  const special = hours.special_days.find((s) => s.date === date);
  const local: [number, number][] = [];
  if (special) {
    if (!special.closed) {
      for (const r of special.periods) {
        const start = hhmm(r.open);
        let end = hhmm(r.close);
        if (end <= start) end += 1440;
        local.push([start, end]);
      }
    }
  } else {
    const base = dayOfWeek(date) * 1440;
    for (const [a, b] of week) {
      const start = Math.max(a, base);
      const end = Math.min(b, base + 1440);
      if (start < end) local.push([start - base, end - base]);
    }
  }
  const out: [number, number][] = [];
  for (const [a, b] of local) {
    const start = localToInstant(date, a, tz);
    const end = b >= 1440 ? localToInstant(addDays(date, 1), b - 1440, tz) : localToInstant(date, b, tz);
    if (start < end) out.push([start, end]);
  }
  return out;
}

export interface HoursState {
  open_now: boolean;
  next_open: string | null;
  next_close: string | null;
}

/** open_now, next_open and next_close at `now`. */
export function hoursState(hours: StoredHours, now: Date): HoursState {
  return stateWithin(hours, now.getTime()).state;
}

/**
 * The state at `t`, and until when it holds unchanged: the next opening or closing, or the
 * next local midnight (the horizon of 15 days, and the special days shown, move with the date).
 */
function stateWithin(hours: StoredHours, t: number): { state: HoursState; today: string; until: number } {
  const tz = hours.time_zone;
  const today = localDate(t, tz);
  const week = weekIntervals(hours.periods);
  // With no regular hours, only special days can open: look as far as they are published.
  const horizonDays = week.length === 0 ? 92 : 15;
  let intervals: [number, number][] = [];
  for (let i = -1; i <= horizonDays; i++) intervals.push(...intervalsOfDay(hours, addDays(today, i), week));
  intervals = mergeIntervals(intervals);
  const horizonEnd = localToInstant(addDays(today, horizonDays + 1), 0, tz);
  const midnight = localToInstant(addDays(today, 1), 0, tz);
  const current = intervals.find(([a, b]) => a <= t && t < b);
  if (current) {
    return {
      state: {
        open_now: true,
        next_open: null,
        next_close: current[1] >= horizonEnd ? null : formatInZone(current[1], tz),
      },
      today,
      until: Math.min(current[1], midnight),
    };
  }
  const next = intervals.find(([a]) => a > t);
  return {
    state: { open_now: false, next_open: next ? formatInZone(next[0], tz) : null, next_close: null },
    today,
    until: Math.min(next ? next[0] : horizonEnd, midnight),
  };
}

export function isOpenAt(hours: StoredHours, now: Date): boolean {
  return hoursState(hours, now).open_now;
}

/**
 * Rendered OpeningHours, kept per hours until their state can change: a search page renders
 * 20 of them, and working one out takes some 17 days of local intervals (~65 us).
 */
const rendered = new LRUCache<string, { value: OpeningHours; from: number; until: number }>({ max: 50_000 });

/** The OpeningHours of a response: the stored hours, the next 90 days of special days, and the state at `now`. */
export function openingHoursAt(hours: StoredHours, now: Date): OpeningHours {
  return renderedAt(hours, now.getTime()).value;
}

/** Until when (epoch ms) `openingHoursAt(hours, now)` stays the same. */
export function openingHoursUntil(hours: StoredHours, now: Date): number {
  return renderedAt(hours, now.getTime()).until;
}

function renderedAt(hours: StoredHours, t: number): { value: OpeningHours; from: number; until: number } {
  const key = JSON.stringify(hours);
  const hit = rendered.get(key);
  if (hit && hit.from <= t && t < hit.until) return hit;
  const { state, today, until } = stateWithin(hours, t);
  const end = addDays(today, 90);
  const value: OpeningHours = {
    time_zone: hours.time_zone,
    periods: hours.periods,
    weekday_text: hours.weekday_text,
    special_days: hours.special_days.filter((s) => s.date >= today && s.date < end),
    ...state,
  };
  const entry = { value, from: t, until };
  rendered.set(key, entry);
  return entry;
}

/** `Monday: 07:30–12:00, 13:00–17:00` lines, Monday first. */
export function weekdayText(periods: readonly OpeningPeriod[]): OpeningHours['weekday_text'] {
  const fmt = (t: string) => `${t.slice(0, 2)}:${t.slice(2, 4)}`;
  const lines: string[] = [];
  for (const day of [1, 2, 3, 4, 5, 6, 0]) {
    const name = DAY_NAMES[day] ?? '';
    if (isAroundTheClock(periods)) {
      lines.push(`${name}: Open 24 hours`);
      continue;
    }
    const ranges = periods
      .filter((p) => p.open.day === day && p.close)
      .sort((a, b) => a.open.time.localeCompare(b.open.time))
      .map((p) => `${fmt(p.open.time)}–${fmt(p.close?.time ?? '0000')}`);
    lines.push(`${name}: ${ranges.length ? ranges.join(', ') : 'Closed'}`);
  }
  return lines as OpeningHours['weekday_text'];
}

// --- the SQL side's representation ------------------------------------------------------------

/** `{[450,720),[780,1020)}`: the regular week for an int4multirange column. */
export function weekMultirange(periods: readonly OpeningPeriod[]): string {
  return `{${weekIntervals(periods)
    .map(([a, b]) => `[${a},${b})`)
    .join(',')}}`;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The local days the special days cover, and their open intervals, for tstzmultirange columns. */
export function specialMultiranges(hours: StoredHours): { cover: string; open: string } {
  const cover: string[] = [];
  const open: string[] = [];
  for (const s of hours.special_days) {
    const start = localToInstant(s.date, 0, hours.time_zone);
    const end = localToInstant(addDays(s.date, 1), 0, hours.time_zone);
    cover.push(`[${iso(start)},${iso(end)})`);
    for (const [a, b] of intervalsOfDay({ ...hours, special_days: [s] }, s.date))
      open.push(`[${iso(a)},${iso(b)})`);
  }
  return { cover: `{${cover.join(',')}}`, open: `{${open.join(',')}}` };
}
