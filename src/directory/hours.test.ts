import { describe, expect, it } from 'vitest';
import type { OpeningPeriod } from '../../generated/directory/client/types.gen.ts';
import { hoursState, openingHoursAt, weekdayText, weekIntervals, type StoredHours } from './hours.ts';

const p = (day: number, open: string, closeDay: number, close: string): OpeningPeriod => ({
  open: { day, time: open },
  close: { day: closeDay, time: close },
});
const split: OpeningPeriod[] = [1, 2, 3, 4, 5].flatMap((d) => [
  p(d, '0730', d, '1200'),
  p(d, '1300', d, '1700'),
]);
const berlin = (periods: OpeningPeriod[], special_days: StoredHours['special_days'] = []): StoredHours => ({
  time_zone: 'Europe/Berlin',
  periods,
  weekday_text: weekdayText(periods),
  special_days,
});

describe('hours', () => {
  it('split day: open in the morning, closed over lunch, next opening after lunch', () => {
    const h = berlin(split);
    // Friday 2026-11-20 10:00 CET = 09:00Z
    expect(hoursState(h, new Date('2026-11-20T09:00:00Z'))).toEqual({
      open_now: true,
      next_open: null,
      next_close: '2026-11-20T12:00:00+01:00',
    });
    expect(hoursState(h, new Date('2026-11-20T11:30:00Z'))).toEqual({
      open_now: false,
      next_open: '2026-11-20T13:00:00+01:00',
      next_close: null,
    });
    // Saturday: closed until Monday 07:30
    expect(hoursState(h, new Date('2026-11-21T10:00:00Z')).next_open).toBe('2026-11-23T07:30:00+01:00');
  });

  it('overnight period: open after midnight, closes on the next day', () => {
    const bar = berlin([p(5, '1800', 6, '0200'), p(6, '1800', 0, '0300')]);
    // Saturday 01:00 CET (Friday night's period)
    expect(hoursState(bar, new Date('2026-11-21T00:00:00Z'))).toMatchObject({
      open_now: true,
      next_close: '2026-11-21T02:00:00+01:00',
    });
    // Sunday 02:30 CET: Saturday's period that wraps over the end of the week
    expect(hoursState(bar, new Date('2026-11-22T01:30:00Z'))).toMatchObject({
      open_now: true,
      next_close: '2026-11-22T03:00:00+01:00',
    });
    expect(weekIntervals(bar.periods)).toEqual([
      [0, 180],
      [5 * 1440 + 1080, 6 * 1440 + 120],
      [6 * 1440 + 1080, 7 * 1440],
    ]);
  });

  it('24/7: always open, next_close null, one line per day', () => {
    const h = berlin([{ open: { day: 0, time: '0000' }, close: null }]);
    expect(hoursState(h, new Date('2026-11-20T03:00:00Z'))).toEqual({
      open_now: true,
      next_open: null,
      next_close: null,
    });
    expect(h.weekday_text[0]).toBe('Monday: Open 24 hours');
  });

  it('24/7 with a holiday closure: next_close is the start of the holiday', () => {
    const h = berlin(
      [{ open: { day: 0, time: '0000' }, close: null }],
      [{ date: '2026-12-25', closed: true, periods: [] }],
    );
    expect(hoursState(h, new Date('2026-12-20T10:00:00Z')).next_close).toBe('2026-12-25T00:00:00+01:00');
    expect(hoursState(h, new Date('2026-12-25T10:00:00Z'))).toMatchObject({
      open_now: false,
      next_open: '2026-12-26T00:00:00+01:00',
    });
  });

  it('holidays replace the regular day: closed on a Thursday holiday, short hours on Dec 31', () => {
    const h = berlin(split, [
      { date: '2026-12-24', closed: true, periods: [] },
      { date: '2026-12-31', closed: false, periods: [{ open: '0900', close: '1100' }] },
    ]);
    expect(hoursState(h, new Date('2026-12-24T09:00:00Z'))).toMatchObject({
      open_now: false,
      next_open: '2026-12-25T07:30:00+01:00',
    });
    expect(hoursState(h, new Date('2026-12-31T09:00:00Z'))).toMatchObject({
      open_now: true,
      next_close: '2026-12-31T11:00:00+01:00',
    });
    // 14:00 on Dec 31 would be open on a regular Thursday
    expect(hoursState(h, new Date('2026-12-31T13:00:00Z')).open_now).toBe(false);
    // responses list the special days of the next 90 days only
    expect(openingHoursAt(h, new Date('2026-12-30T10:00:00Z')).special_days.map((s) => s.date)).toEqual([
      '2026-12-31',
    ]);
    expect(openingHoursAt(h, new Date('2026-08-01T10:00:00Z')).special_days).toEqual([]);
  });

  it('DST: local opening times hold across the spring and autumn changes', () => {
    const daily = berlin([0, 1, 2, 3, 4, 5, 6].map((d) => p(d, '0900', d, '1800')));
    // Sunday 2026-03-29 is the spring change in Berlin: 09:00 CEST = 07:00Z
    expect(hoursState(daily, new Date('2026-03-29T06:30:00Z'))).toMatchObject({
      open_now: false,
      next_open: '2026-03-29T09:00:00+02:00',
    });
    expect(hoursState(daily, new Date('2026-03-29T07:00:00Z')).open_now).toBe(true);
    // the day before, 09:00 CET = 08:00Z
    expect(hoursState(daily, new Date('2026-03-28T07:30:00Z')).open_now).toBe(false);
    // autumn: Sunday 2026-10-25, 17:30 CET = 16:30Z open, closes 18:00+01:00
    expect(hoursState(daily, new Date('2026-10-25T16:30:00Z'))).toMatchObject({
      open_now: true,
      next_close: '2026-10-25T18:00:00+01:00',
    });
    // a period spanning the change: Saturday 20:00 to Sunday 04:00 across the autumn change
    const night = berlin([p(6, '2000', 0, '0400')]);
    expect(hoursState(night, new Date('2026-10-25T02:30:00Z'))).toMatchObject({
      open_now: true,
      next_close: '2026-10-25T04:00:00+01:00',
    });
  });

  it('other zones: Lisbon and Helsinki in their own time', () => {
    const lisbon: StoredHours = { ...berlin(split), time_zone: 'Europe/Lisbon' };
    // 07:45 Lisbon (WET = UTC) on a Monday
    expect(hoursState(lisbon, new Date('2026-11-23T07:45:00Z')).open_now).toBe(true);
    const helsinki: StoredHours = { ...berlin(split), time_zone: 'Europe/Helsinki' };
    // 07:45Z is 09:45 in Helsinki
    expect(hoursState(helsinki, new Date('2026-11-23T07:45:00Z')).next_close).toBe(
      '2026-11-23T12:00:00+02:00',
    );
  });

  it('no regular hours: only special days open', () => {
    const h = berlin([], [{ date: '2026-12-05', closed: false, periods: [{ open: '1000', close: '1600' }] }]);
    expect(hoursState(h, new Date('2026-11-20T10:00:00Z'))).toEqual({
      open_now: false,
      next_open: '2026-12-05T10:00:00+01:00',
      next_close: null,
    });
  });

  it('a rendered state is reused only while it holds: every 7 minutes over four days, both ways', () => {
    const h = berlin(split, [
      { date: '2026-12-24', closed: false, periods: [{ open: '0900', close: '1200' }] },
      { date: '2026-12-25', closed: true, periods: [] },
    ]);
    const start = Date.parse('2026-12-22T20:00:00Z');
    const times = Array.from({ length: (4 * 24 * 60) / 7 }, (_, i) => start + i * 7 * 60_000);
    for (const t of [...times, ...times.reverse()]) {
      const now = new Date(t);
      const shown = openingHoursAt(h, now);
      expect(shown, now.toISOString()).toMatchObject(hoursState(h, now));
      // the special days shown start with the local date
      const local = new Date(t + 3_600_000).toISOString().slice(0, 10);
      expect(
        shown.special_days.every((d) => d.date >= local),
        now.toISOString(),
      ).toBe(true);
    }
  });
});
