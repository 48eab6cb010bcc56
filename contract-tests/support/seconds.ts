/**
 * Audio is billed and reported to the millisecond, rounded half up: 19.5675 s is stated as
 * 19.568. The stored figure is therefore within half a millisecond of the exact length, and
 * exactly half a millisecond off when the length falls on the half (one sample in 24 at
 * 24 kHz). `toBeCloseTo(x, 3)` demands strictly less than that and fails on the half.
 */
import { expect } from 'vitest';

export function expectMilliseconds(stated: number, exact: number): void {
  const off = Math.abs(stated - exact);
  expect(off, `${stated} s states ${exact} s to the millisecond`).toBeLessThanOrEqual(0.0005 + 1e-9);
}
