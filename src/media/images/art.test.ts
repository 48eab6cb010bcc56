import { describe, expect, it } from 'vitest';
import { paint } from './art.ts';
import { describeScene, readScene } from './scene.ts';

describe('the painter', () => {
  it('reads the scene from the prompt’s words', () => {
    const scene = readScene('A watercolour of a harbour in Lisbon at sunrise, blue and gold');
    expect(scene).toMatchObject({ time: 'sunrise', water: true, city: true, abstract: false });
    expect(scene.colours.map((c) => c.name)).toEqual(['blue', 'gold']);
    expect(readScene('Snowy mountains under the moon')).toMatchObject({
      time: 'night',
      terrain: 'mountains',
      snow: true,
    });
    expect(readScene('quarterly revenue chart').abstract).toBe(true);
    expect(describeScene(readScene('A pine forest by a lake at sunset'))).toBe(
      'A landscape at sunset, a forest, water reflecting the sky.',
    );
  });

  it('paints the requested size, the same pixels for the same prompt and seed, others for another seed', () => {
    const options = {
      width: 96,
      height: 64,
      seed: 1,
      quality: 'low',
      natural: false,
      transparent: false,
    } as const;
    const a = paint('A desert with dunes at noon', options);
    expect(a.rgba.length).toBe(96 * 64 * 4);
    expect(paint('A desert with dunes at noon', options).rgba).toEqual(a.rgba);
    expect(paint('A desert with dunes at noon', { ...options, seed: 2 }).rgba).not.toEqual(a.rgba);
    expect(a.hasAlpha).toBe(false);
  });

  it('leaves the sky clear with a transparent background', () => {
    const painting = paint('Mountains at sunset', {
      width: 64,
      height: 64,
      seed: 5,
      quality: 'low',
      natural: false,
      transparent: true,
    });
    expect(painting.hasAlpha).toBe(true);
    expect(painting.rgba[3]).toBe(0); // the top-left pixel is sky
    expect(painting.rgba[(63 * 64 + 32) * 4 + 3]).toBe(255); // the bottom is land
  });
});
