// The painter's pool admits a request's images all or none: a request that does not fit whole is
// a 503 at once, before any of its images is painted.
import { afterAll, describe, expect, it } from 'vitest';
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
});
