// A worker thread that does batch work (painting an image takes up to a second of CPU) runs at a
// lower OS priority than the thread that serves requests: on a machine with few cores a painter
// starting or painting beside a loaded HTTP thread took CPU from it, and every request waited
// (the status probe paints one every 30 s: a stall of 300-500 ms under load on the busy 2-core
// machine). On Linux a thread has a nice value of its own; elsewhere this does nothing.
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { isMainThread } from 'node:worker_threads';

/** The nice value of a background thread: it still gets the CPU nobody else wants. */
export const BACKGROUND_NICE = 10;

/** Lowers the priority of this thread (never the main thread's); whether it could. */
export function lowerThisThread(nice = BACKGROUND_NICE): boolean {
  if (isMainThread || process.platform !== 'linux') return false;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0 || tid === process.pid) return false;
    if (getPriority(tid) < nice) setPriority(tid, nice);
    return true;
  } catch {
    return false; // no /proc, or not allowed: the thread keeps its priority
  }
}

// imported first by a worker's entry module, so its own imports already load at the lower priority
lowerThisThread();
