// A campaign's send window: days of the week and a daily span of local time in an IANA zone.
// `nextOpening` says when a message due at an instant may go out: at once inside the window,
// else at the next day's start (the zone's arithmetic is the directory's opening hours' own).
import type { SendWindow } from '../../generated/directory/client/types.gen.ts';
import { addDays, localDate, localParts, localToInstant } from '../directory/hours.ts';
import { BadRequestError } from '../platform/errors.ts';

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

export function checkWindow(window: SendWindow): void {
  try {
    new Intl.DateTimeFormat('en', { timeZone: window.time_zone });
  } catch {
    throw new BadRequestError('invalid_time_zone', `${window.time_zone} is not an IANA time zone.`, {
      param: 'send_window.time_zone',
    });
  }
  if (minutesOf(window.end) <= minutesOf(window.start)) {
    throw new BadRequestError(
      'invalid_send_window',
      `The send window must end after it starts (${window.start} to ${window.end}); it cannot span midnight.`,
      { param: 'send_window.end' },
    );
  }
}

/** The first instant at or after `at` (ms) inside the window; `at` itself when there is none. */
export function nextOpening(window: SendWindow | null, at: number): number {
  if (window === null) return at;
  const start = minutesOf(window.start);
  const end = minutesOf(window.end);
  const days = new Set<string>(window.days);
  const today = localDate(at, window.time_zone);
  const p = localParts(at, window.time_zone);
  const minute = p.hour * 60 + p.minute;
  for (let i = 0; i < 8; i++) {
    const date = addDays(today, i);
    const [y, m, d] = date.split('-').map(Number) as [number, number, number];
    const weekday = DAYS[new Date(Date.UTC(y, m - 1, d)).getUTCDay()] ?? 'sun';
    if (!days.has(weekday)) continue;
    if (i === 0) {
      if (minute >= end) continue;
      if (minute >= start) return at;
    }
    return localToInstant(date, start, window.time_zone);
  }
  return at;
}
