// Memory given back at rest. V8 keeps the heap a thread grew to: the young generation that
// --max-semi-space-size=64 lets grow to 128 MiB under load, old-space pages a start-up left
// half empty. It shrinks them only in a memory-reducing collection, which it seldom runs by
// itself: the model API rested with 237 MiB of heap committed for 113 used. So when the thread's
// event loop has been idle a while and the heap holds much more than it uses, one such
// collection runs (never under load, nor on a heap so large that it would take long).
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { performance } from 'node:perf_hooks';
import type { Logger } from './logger.ts';

type Gc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

let gc: Gc | undefined;
/** V8's collector, taken from a context of its own: no global `gc` is left in this one. */
function collector(): Gc {
  if (gc) return gc;
  const global = (globalThis as { gc?: Gc }).gc;
  if (typeof global === 'function') return (gc = global);
  setFlagsFromString('--expose-gc');
  try {
    gc = runInNewContext('gc') as Gc;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  return gc;
}

const MIB = 1024 * 1024;

export interface Compaction {
  /** heap committed and used before and after, MiB */
  before: { total: number; used: number };
  after: { total: number; used: number };
  ms: number;
}

const heap = () => {
  const h = getHeapStatistics();
  return { total: h.total_heap_size / MIB, used: h.used_heap_size / MIB };
};

/** One memory-reducing collection of this thread's heap, now. */
export function compactHeap(): Compaction {
  const before = heap();
  const started = performance.now();
  collector()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return { before, after: heap(), ms: performance.now() - started };
}

export interface RestOptions {
  /** how often the event loop's use is looked at */
  everyMs?: number;
  /** the loop counts as idle below this share of the last period busy */
  idleBelow?: number;
  /** compact when the heap holds this many MiB more unused than after the last compaction */
  slackMb?: number;
  /**
   * never when the heap uses more: the collection takes about 1.5-5 ms a MiB it keeps (quiet to
   * busy machine), all of it on the thread, and a request that comes then waits for it
   */
  maxUsedMb?: number;
}

/** Compacts this thread's heap whenever it is idle with room to give back, until stopped. */
export function startRestCompaction(logger?: Logger, options: RestOptions = {}): { stop(): void } {
  const { everyMs = 5_000, idleBelow = 0.05, slackMb = 32, maxUsedMb = 256 } = options;
  let last = performance.eventLoopUtilization();
  let floor = 0;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    const { total, used } = heap();
    if (busy >= idleBelow || used > maxUsedMb || total - used < floor + slackMb) return;
    const done = compactHeap();
    floor = done.after.total - done.after.used;
    last = performance.eventLoopUtilization();
    const round = (x: number) => Math.round(x * 10) / 10;
    logger?.debug(
      {
        heap_mib: { before: round(done.before.total), after: round(done.after.total) },
        ms: round(done.ms),
      },
      'heap compacted at rest',
    );
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
