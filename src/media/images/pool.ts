// Worker threads that paint and encode images (a 1024x1024 picture takes about a second of CPU),
// so the event loop keeps serving other requests. Bounded: `size` workers, `queue` jobs waiting,
// past that a 503 `engine_busy` with Retry-After. Started on first use, and a worker idle for
// `idleMs` ends: the status probe's one small image every 30 s does not keep a thread (and its
// heap) alive between probes, nor does a burst of requests once it is over.
import { Worker } from 'node:worker_threads';
import { ApiError } from '../../platform/errors.ts';
import type { PaintOptions } from './art.ts';
import type { ImageFormat } from './image-formats.ts';
import type { PaintJob, PaintResult } from './worker.ts';

interface Pending {
  job: PaintJob;
  resolve(result: { bytes: Buffer; description: string }): void;
  reject(error: Error): void;
}

/** The young generation of each painter thread, MB. */
export const PAINTER_YOUNG_GENERATION_MB = 16;

function busy(): ApiError {
  return new ApiError(
    503,
    'engine_busy',
    'The image engine of this instance is busy; retry in a few seconds.',
    {
      headers: { 'Retry-After': '5', 'retry-after-ms': '5000' },
    },
  );
}

export class PaintPool {
  readonly #size: number;
  readonly #queueLimit: number;
  readonly #idleMs: number;
  readonly #idle: Worker[] = [];
  readonly #idleTimers = new Map<Worker, NodeJS.Timeout>();
  readonly #busy = new Map<Worker, Pending>();
  readonly #queue: Pending[] = [];
  #workers = 0;
  #nextId = 1;
  #closed = false;

  constructor(size: number, queue = 64, idleMs = 10_000) {
    this.#size = Math.max(1, size);
    this.#queueLimit = queue;
    this.#idleMs = idleMs;
  }

  /** Worker threads running now (painting or idle). */
  get workers(): number {
    return this.#workers;
  }

  /**
   * Throws the 503 `engine_busy` unless `count` more jobs fit in the queue now. A request's images
   * are admitted all or none: without it, a request of ten whose last four found the queue full
   * would wait for its first six to be painted, for nothing, before its 503.
   */
  admit(count: number): void {
    if (this.#closed) throw new ApiError(503, 'engine_unavailable', 'The image engine is shutting down.');
    if (this.#queue.length + count > this.#queueLimit) throw busy();
  }

  paint(
    prompt: string,
    options: PaintOptions,
    format: ImageFormat,
    quality: number | undefined,
    signal?: AbortSignal,
  ): Promise<{ bytes: Buffer; description: string }> {
    if (this.#closed)
      return Promise.reject(new ApiError(503, 'engine_unavailable', 'The image engine is shutting down.'));
    if (this.#queue.length >= this.#queueLimit) return Promise.reject(busy());
    return new Promise((resolve, reject) => {
      const pending: Pending = {
        job: { id: this.#nextId++, prompt, options, format, quality },
        resolve,
        reject,
      };
      signal?.addEventListener(
        'abort',
        () => {
          const at = this.#queue.indexOf(pending);
          if (at >= 0) {
            this.#queue.splice(at, 1);
            reject(signal.reason as Error);
          }
        },
        { once: true },
      );
      this.#queue.push(pending);
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      let worker = this.#idle.pop();
      if (worker !== undefined) {
        clearTimeout(this.#idleTimers.get(worker));
        this.#idleTimers.delete(worker);
      } else {
        if (this.#workers >= this.#size) return;
        worker = this.#spawn();
      }
      const pending = this.#queue.shift() as Pending;
      this.#busy.set(worker, pending);
      worker.postMessage(pending.job);
    }
  }

  #spawn(): Worker {
    const worker = new Worker(new URL('./worker.ts', import.meta.url), {
      // one image at a time, its pixels in ArrayBuffers: a small young generation, whatever
      // --max-semi-space-size the HTTP thread runs with (with that, a worker kept about 110 MiB
      // of young generation resident while it lived)
      resourceLimits: { maxYoungGenerationSizeMb: PAINTER_YOUNG_GENERATION_MB },
    });
    this.#workers++;
    worker.unref();
    worker.on('message', (result: PaintResult) => {
      const pending = this.#busy.get(worker);
      this.#busy.delete(worker);
      if (pending) {
        if (result.ok) {
          pending.resolve({
            bytes: Buffer.from(result.bytes.buffer, result.bytes.byteOffset, result.bytes.byteLength),
            description: result.description,
          });
        } else
          pending.reject(new ApiError(500, 'engine_failed', `The image engine failed: ${result.message}`));
      }
      this.#idle.push(worker);
      this.#pump();
      if (this.#idle.includes(worker)) this.#retireLater(worker);
    });
    worker.on('error', (error) => {
      const pending = this.#busy.get(worker);
      this.#busy.delete(worker);
      pending?.reject(new ApiError(500, 'engine_failed', `The image engine failed: ${error.message}`));
    });
    worker.on('exit', () => {
      this.#workers--;
      clearTimeout(this.#idleTimers.get(worker));
      this.#idleTimers.delete(worker);
      const at = this.#idle.indexOf(worker);
      if (at >= 0) this.#idle.splice(at, 1);
      const pending = this.#busy.get(worker);
      this.#busy.delete(worker);
      pending?.reject(new ApiError(500, 'engine_failed', 'The image engine stopped.'));
      if (!this.#closed) this.#pump();
    });
    return worker;
  }

  /** Ends `worker` if it is still idle `idleMs` from now. */
  #retireLater(worker: Worker): void {
    const timer = setTimeout(() => {
      this.#idleTimers.delete(worker);
      const at = this.#idle.indexOf(worker);
      if (at < 0) return;
      this.#idle.splice(at, 1);
      void worker.terminate();
    }, this.#idleMs);
    timer.unref();
    this.#idleTimers.set(worker, timer);
  }

  async close(): Promise<void> {
    for (const timer of this.#idleTimers.values()) clearTimeout(timer);
    this.#closed = true;
    for (const pending of this.#queue.splice(0))
      pending.reject(new ApiError(503, 'engine_unavailable', 'The image engine is shutting down.'));
    await Promise.all([...this.#idle, ...this.#busy.keys()].map((w) => w.terminate()));
  }
}
