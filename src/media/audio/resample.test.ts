import { describe, expect, it } from 'vitest';
import { Resampler, resample } from './resample.ts';

const tone = (rate: number, seconds: number, hz = 440) =>
  Float32Array.from(
    { length: Math.round(rate * seconds) },
    (_, i) => 0.5 * Math.sin((2 * Math.PI * hz * i) / rate),
  );

describe('resample', () => {
  it('keeps a tone’s pitch and level from 22,050 to 24,000 Hz, at the exact length', () => {
    const out = resample(tone(22_050, 1), 22_050, 24_000);
    expect(out.length).toBe(24_000);
    const expected = tone(24_000, 1);
    for (let i = 200; i < out.length - 200; i++)
      expect(Math.abs((out[i] as number) - (expected[i] as number))).toBeLessThan(1e-3);
  });

  it('gives the same samples whatever pieces the input arrives in (speech is deterministic)', () => {
    const input = tone(22_050, 0.5, 313);
    const whole = resample(input, 22_050, 24_000);
    for (const step of [1, 777, 4096]) {
      const r = new Resampler(22_050, 24_000);
      const parts: number[] = [];
      for (let i = 0; i < input.length; i += step) parts.push(...r.push(input.subarray(i, i + step)));
      parts.push(...r.end());
      expect(Float32Array.from(parts.slice(0, whole.length))).toEqual(whole);
    }
  });

  it('filters what the lower rate cannot hold when it downsamples (no aliasing)', () => {
    // 11 kHz is above 16 kHz's Nyquist frequency (8 kHz): downsampled, it must vanish, not fold to 5 kHz
    const out = resample(tone(48_000, 0.2, 11_000), 48_000, 16_000);
    const peak = Math.max(...out.subarray(100, out.length - 100).map(Math.abs));
    expect(peak).toBeLessThan(0.01);
  });
});
