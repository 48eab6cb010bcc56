import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { BACKGROUND_NICE } from './background-thread.ts';

// the nice value of the calling thread: field 19 of /proc/thread-self/stat
const NICE = `Number(
  require('node:fs').readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[16]
)`;
const niceOfThisThread = () =>
  Number(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ')[16]);

/** The nice values of a worker thread after importing the module, and after asking for `more`. */
function inWorker(more: number): Promise<[number, number]> {
  const module = new URL('./background-thread.ts', import.meta.url).href;
  return new Promise((resolve, reject) => {
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       import(${JSON.stringify(module)}).then((m) => {
         const imported = ${NICE};
         m.lowerThisThread(${more});
         parentPort.postMessage([imported, ${NICE}]);
       }, (err) => parentPort.postMessage(String(err)));`,
      { eval: true },
    );
    worker.once('message', (values: [number, number]) => {
      resolve(values);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

describe.runIf(process.platform === 'linux')('a background thread', () => {
  it('runs at a lower priority once it imports the module; the thread that started it keeps its own', async () => {
    const before = niceOfThisThread();
    const more = Math.min(19, Math.max(before, BACKGROUND_NICE) + 3);
    const [imported, lowered] = await inWorker(more);
    expect(imported).toBe(Math.max(before, BACKGROUND_NICE));
    expect(lowered).toBe(more);
    expect(niceOfThisThread()).toBe(before);
  });
});
