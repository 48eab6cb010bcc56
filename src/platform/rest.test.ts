import { describe, expect, it } from 'vitest';
import { getHeapStatistics } from 'node:v8';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from './logger.ts';
import { compactHeap, startRestCompaction } from './rest.ts';

const MIB = 1024 * 1024;

/** Grows the heap with short-lived objects (what a burst of requests leaves) and drops them. */
function churn(mib: number): void {
  let kept: unknown[] = [];
  for (let i = 0; i < mib * 8; i++) {
    kept.push(Array.from({ length: 1024 }, (_, j) => ({ i, j })));
    if (kept.length > 64) kept = [];
  }
}

function recorder() {
  const lines: { fields: { heap_mib: { before: number; after: number } }; message: string }[] = [];
  const logger = {
    debug: (fields: (typeof lines)[number]['fields'], message: string) => lines.push({ fields, message }),
  } as unknown as Logger;
  return { logger, lines };
}

describe('the heap at rest', () => {
  it('gives back what a burst grew, which an ordinary collection keeps', () => {
    churn(200);
    const grown = getHeapStatistics().total_heap_size / MIB;
    const done = compactHeap();
    expect(done.before.total).toBeGreaterThanOrEqual(grown - 1);
    expect(done.after.total).toBeLessThan(done.before.total - 16);
    expect(done.after.used).toBeLessThanOrEqual(done.after.total);
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });

  it('compacts once the event loop is idle, never while it is busy', async () => {
    const { logger, lines } = recorder();
    compactHeap();
    const rest = startRestCompaction(logger, { everyMs: 100, slackMb: 8, maxUsedMb: 4096 });
    try {
      // busy: the loop held for the whole of each period, garbage growing the heap
      const until = Date.now() + 600;
      while (Date.now() < until) churn(20);
      await sleep(0);
      expect(lines).toEqual([]);
      // idle: the next quiet period compacts, and only once while nothing new is left
      await sleep(500);
      expect(lines.length).toBe(1);
      const [line] = lines;
      expect(line?.message).toBe('heap compacted at rest');
      expect(line?.fields.heap_mib.after).toBeLessThan(line?.fields.heap_mib.before ?? 0);
      await sleep(400);
      expect(lines.length).toBe(1);
    } finally {
      rest.stop();
    }
  });

  it('leaves a heap that uses more than its bound to V8', async () => {
    const { logger, lines } = recorder();
    compactHeap();
    const rest = startRestCompaction(logger, { everyMs: 100, slackMb: 8, maxUsedMb: 1 });
    try {
      churn(20);
      await sleep(500);
      expect(lines).toEqual([]);
    } finally {
      rest.stop();
    }
  });
});
