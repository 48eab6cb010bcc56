import { describe, expect, it } from 'vitest';
import { nextOpening } from './window.ts';

const berlin = {
  time_zone: 'Europe/Berlin',
  days: ['mon', 'tue', 'wed', 'thu', 'fri'],
  start: '09:00',
  end: '17:00',
} as const;
const at = (iso: string) => Date.parse(iso);

describe('send windows', () => {
  it('lets a message go at once inside the window', () => {
    const t = at('2026-11-25T10:30:00Z'); // Wednesday 11:30 in Berlin
    expect(nextOpening({ ...berlin, days: [...berlin.days] }, t)).toBe(t);
  });

  it('waits for the next opening after hours, over the weekend and in summer time', () => {
    const w = { ...berlin, days: [...berlin.days] };
    expect(nextOpening(w, at('2026-11-25T16:30:00Z'))).toBe(at('2026-11-26T08:00:00Z')); // Wed 17:30 -> Thu 09:00 CET
    expect(nextOpening(w, at('2026-11-27T17:00:00Z'))).toBe(at('2026-11-30T08:00:00Z')); // Fri evening -> Mon
    expect(nextOpening(w, at('2026-11-25T06:00:00Z'))).toBe(at('2026-11-25T08:00:00Z')); // Wed 07:00 -> 09:00
    expect(nextOpening(w, at('2026-07-04T12:00:00Z'))).toBe(at('2026-07-06T07:00:00Z')); // Saturday -> Mon 09:00 CEST
  });

  it('lets anything go without a window', () => {
    expect(nextOpening(null, 42)).toBe(42);
  });
});
