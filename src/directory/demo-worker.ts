// A worker thread that makes the demo directory's rows (demo.ts, store.ts's listingRow: the
// listing, its folded text, embedding and hours), so the thread that inserts them does nothing
// else and both cores work. It runs ahead of the inserts by at most `ahead` batches: each batch
// the other side takes is acknowledged with a message, which lets one more be made.
import { parentPort, workerData } from 'node:worker_threads';
import { demoListing, useDemoCities } from './demo.ts';
import type { DemoRowsJob, DemoRowsMessage } from './demo-rows.ts';
import { type ListingRow, listingRow } from './store.ts';

const job = workerData as DemoRowsJob;
useDemoCities(job.cities);
let credit = job.ahead;
let next = 0;
let scheduled = false;

function step(): void {
  scheduled = false;
  if (credit <= 0 || next >= job.count) return;
  try {
    const rows: ListingRow[] = [];
    const end = Math.min(job.count, next + job.batchSize);
    for (let i = next; i < end; i++) rows.push(listingRow(demoListing(job.seed, i)));
    next = end;
    credit--;
    parentPort?.postMessage({ rows } satisfies DemoRowsMessage);
    if (next >= job.count) parentPort?.postMessage({ done: true } satisfies DemoRowsMessage);
    else schedule();
  } catch (err) {
    parentPort?.postMessage({
      error: err instanceof Error ? err.message : String(err),
    } satisfies DemoRowsMessage);
  }
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(step); // between batches, so the acknowledgements get in
}

parentPort?.on('message', () => {
  credit++;
  schedule();
});
schedule();
