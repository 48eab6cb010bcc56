// The painter's pool admits a request's images all or none: a request that does not fit whole is
// a 503 at once, before any of its images is painted.
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../../../contract-tests/support/client.ts';
import { ApiError } from '../../platform/errors.ts';
import { PaintPool } from './pool.ts';

const pool = new PaintPool(1, 3);
afterAll(() => pool.close());

const options = {
  width: 640,
  height: 480,
  seed: 1,
  quality: 'high',
  natural: false,
  transparent: false,
} as const;

describe('PaintPool', () => {
  it('admits a request whole or answers engine_busy before painting any of it', async () => {
    expect(() => pool.admit(3)).not.toThrow();
    // one painting, three waiting: the queue is full
    const jobs = Array.from({ length: 4 }, (_, i) =>
      pool.paint(`a lake ${i}`, { ...options, seed: i }, 'png', undefined),
    );
    let refused: unknown;
    try {
      pool.admit(1);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect([(refused as ApiError).status, (refused as ApiError).code]).toEqual([503, 'engine_busy']);
    expect((refused as ApiError).headers).toMatchObject({ 'Retry-After': '5' });
    const painted = await Promise.all(jobs);
    expect(painted.every((p) => p.bytes.subarray(1, 4).toString('latin1') === 'PNG')).toBe(true);
    expect(() => pool.admit(3)).not.toThrow();
    expect(() => pool.admit(4)).toThrow(ApiError);
  }, 60_000);

  it('ends a worker that stays idle, and starts one again on the next image', async () => {
    const brief = new PaintPool(1, 3, 200);
    try {
      expect(brief.workers).toBe(0); // nothing started before the first image
      await brief.paint('a lake', options, 'png', undefined);
      expect(brief.workers).toBe(1);
      await until('the idle worker to end', () => brief.workers === 0, 10_000);
      const again = await brief.paint('a hill', options, 'png', undefined);
      expect(again.bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
    } finally {
      await brief.close();
    }
  }, 60_000);

  it('paints the largest size in quality high and webp within its small young generation', async () => {
    const large = new PaintPool(1);
    try {
      for (const format of ['png', 'webp'] as const) {
        const { bytes } = await large.paint(
          'a harbour at dusk, boats and gulls',
          { ...options, width: 1792, height: 1024 },
          format,
          90,
        );
        expect(bytes.length).toBeGreaterThan(10_000);
      }
    } finally {
      await large.close();
    }
  }, 120_000);
});
