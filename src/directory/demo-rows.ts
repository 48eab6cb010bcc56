// The demo directory's rows, made on a worker thread (demo-worker.ts) and taken batch by batch:
// a first start begins making them before the database is even open, and inserts them as they
// come (demo.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { euCities, type GazetteerPlace } from './data/gazetteer.ts';
import type { ListingRow } from './store.ts';

/** What demo-worker.ts is asked to make, and what it sends back. */
export interface DemoRowsJob {
  seed: string | number;
  count: number;
  batchSize: number;
  ahead: number;
  /** The places to draw from, so the worker parses no gazetteer of its own (this thread does anyway). */
  cities: GazetteerPlace[];
}

export type DemoRowsMessage = { rows: ListingRow[] } | { done: true } | { error: string };

/** Demo listings are in EU places of this many people or more (their municipalities are too). */
export const DEMO_CITY_POPULATION = 5000;

/** The seed of the demo directory: its listings are the same on every machine. */
export const DEMO_SEED = 'eurus-demo';

export interface DemoRows extends AsyncIterable<ListingRow[]> {
  readonly count: number;
  readonly seed: string | number;
  /** Stops making rows (the directory was filled already, or the start failed). */
  cancel(): void;
}

/**
 * Whether the directory will find no listings (a first start), so its rows are worth making
 * ahead: PGlite's folder holds no database yet, or lives in memory. With PostgreSQL the load
 * itself finds out, a little later.
 */
export function directoryStartsEmpty(storage: {
  demoListings: number;
  databaseUrl: string | undefined;
  dataDir: string;
}): boolean {
  if (storage.demoListings === 0 || storage.databaseUrl !== undefined) return false;
  return storage.dataDir.startsWith('memory://') || !existsSync(join(storage.dataDir, 'PG_VERSION'));
}

/**
 * Starts making `count` demo rows of `seed` on a worker thread, `batchSize` a batch, in `cities`.
 * The gazetteer is parsed here (about a second), where search needs it anyway, and the worker is
 * handed the ~14,000 places it draws from (tens of milliseconds to copy).
 */
export function startDemoRows(
  count: number,
  seed: string | number = DEMO_SEED,
  batchSize = 500,
  cities: GazetteerPlace[] = euCities(DEMO_CITY_POPULATION),
): DemoRows {
  const job: DemoRowsJob = { seed, count, batchSize, ahead: 4, cities };
  const worker = new Worker(new URL('./demo-worker.ts', import.meta.url), { workerData: job });
  worker.unref(); // a start that fails exits without waiting for it
  const batches: ListingRow[][] = [];
  let done = count === 0;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const settle = () => {
    wake?.();
    wake = undefined;
  };
  worker.on('message', (message: DemoRowsMessage) => {
    if ('rows' in message) batches.push(message.rows);
    else if ('done' in message) done = true;
    else failure = new Error(`making the demo listings failed: ${message.error}`);
    settle();
  });
  worker.on('error', (err) => {
    failure = err;
    settle();
  });
  worker.on('exit', (code) => {
    if (!done && !failure) failure = new Error(`the demo listings' worker stopped (exit code ${code})`);
    settle();
  });
  let cancelled = false;
  const cancel = () => {
    if (cancelled) return;
    cancelled = true;
    void worker.terminate();
  };
  return {
    count,
    seed,
    cancel,
    async *[Symbol.asyncIterator]() {
      try {
        for (;;) {
          const batch = batches.shift();
          if (batch) {
            worker.postMessage('more');
            yield batch;
            continue;
          }
          if (failure) throw failure;
          if (done) return;
          await new Promise<void>((resolve) => (wake = resolve));
        }
      } finally {
        cancel();
      }
    },
  };
}
