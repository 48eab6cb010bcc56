// The embedded database (PGlite) behind a worker thread (embedded-worker.ts): a statement is a
// message, so PGlite's work (the usage rows, the job queue's polls and upkeep, idempotency) never
// holds the thread that serves HTTP. Requests of one event-loop turn go in one message, replies of
// one turn of the worker come back in one. Errors keep their PostgreSQL fields (`code`,
// `constraint`, ...). If the worker dies, every statement waiting and every later one fails
// with EmbeddedDatabaseLost, and `onLost` is told: never a hang.
import { Worker } from 'node:worker_threads';
import type { Queryable } from './queryable.ts';
import type { Reply, Request, Started, WireError } from './embedded-worker.ts';

/** The embedded database's worker stopped; nothing more can be stored through it. */
export class EmbeddedDatabaseLost extends Error {
  override readonly name = 'EmbeddedDatabaseLost';
}

/** A PostgreSQL error raised in the worker, with the fields of pg-protocol's DatabaseError. */
export class EmbeddedDatabaseError extends Error {
  code?: string;
  constructor(wire: WireError) {
    super(wire.message);
    Object.assign(this, wire);
  }
}

// `Request` without its id, one variant at a time
type Ask = Request extends infer R ? (R extends Request ? Omit<R, 'id'> : never) : never;

/** The worker of an open database, for tests that crash it. */
export const WORKER = Symbol('embedded database worker');

export interface Embedded extends Queryable {
  readonly [WORKER]: Worker;
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** pg-boss's statements: several without values (every statement's rows), or one with values. */
  script(sql: string, params?: unknown[]): Promise<unknown[]>;
  close(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Told once if the worker dies (not when closed). */
  onLost?: (err: EmbeddedDatabaseLost) => void;
  /** A dumped cluster (dumpDataDir's tar.gz) a new database starts as, instead of a fresh one. */
  cluster?: string | undefined;
}

export async function openEmbedded(dataDir: string, options: EmbeddedOptions = {}): Promise<Embedded> {
  const worker = new Worker(new URL('./embedded-worker.ts', import.meta.url), {
    workerData: { dataDir, ...(options.cluster ? { cluster: options.cluster } : {}) },
    // its JavaScript holds one statement's rows at a time: a small young generation, whatever
    // --max-semi-space-size the HTTP thread runs with
    resourceLimits: { maxYoungGenerationSizeMb: 16 },
  });
  const pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  let nextId = 1;
  let outbox: Request[] = [];
  let lost: EmbeddedDatabaseLost | undefined;
  let closing = false;

  // referenced while a statement is waiting, so a process awaiting one does not exit meanwhile
  worker.unref();
  const settle = (id: number) => {
    const entry = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    return entry;
  };

  const fail = (err: EmbeddedDatabaseLost) => {
    if (lost) return;
    lost = err;
    for (const id of [...pending.keys()]) settle(id)?.reject(err);
    if (!closing) options.onLost?.(err);
  };

  let onFirst!: (first: Started) => void;
  let onError!: (err: Error) => void;
  let onExit!: (code: number) => void;
  const started = new Promise<void>((resolve, reject) => {
    onFirst = (first) => (first.ready ? resolve() : reject(new EmbeddedDatabaseError(first.error)));
    onError = reject;
    onExit = (code) => reject(new EmbeddedDatabaseLost(`the embedded database exited (${code})`));
  });
  worker.once('message', onFirst).once('error', onError).once('exit', onExit);
  worker.ref();
  try {
    await started;
  } catch (err) {
    await worker.terminate();
    throw err;
  } finally {
    worker.off('message', onFirst).off('error', onError).off('exit', onExit);
  }
  worker.unref();

  worker.on('message', (replies: Reply[]) => {
    for (const reply of replies) {
      const entry = settle(reply.id);
      if (!entry) continue;
      if (reply.ok) entry.resolve(reply.value);
      else entry.reject(new EmbeddedDatabaseError(reply.error));
    }
  });
  worker.on('error', (err) =>
    fail(new EmbeddedDatabaseLost(`the embedded database failed: ${err.message}`, { cause: err })),
  );
  worker.on('exit', (code) => fail(new EmbeddedDatabaseLost(`the embedded database exited (${code})`)));

  const post = () => {
    const batch = outbox;
    outbox = [];
    try {
      worker.postMessage(batch);
    } catch {
      // a value the structured clone cannot carry (a function, a class with private state): the
      // statement that holds it fails alone
      for (const req of batch) {
        try {
          worker.postMessage([req]);
        } catch (err) {
          settle(req.id)?.reject(err as Error);
        }
      }
    }
  };

  const call = <T>(ask: Ask): Promise<T> => {
    if (lost) return Promise.reject(lost);
    // closing: the transactions open may finish, nothing new starts
    if (closing && ask.op !== 'end' && ask.op !== 'close' && !(ask.op === 'query' && ask.tx !== 0))
      return Promise.reject(new EmbeddedDatabaseLost('the embedded database is closed'));
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      if (outbox.length === 0) queueMicrotask(post);
      outbox.push({ ...ask, id } as Request);
    });
  };

  return {
    [WORKER]: worker,
    query: <T>(sql: string, params: unknown[] = []) => call<T[]>({ op: 'query', sql, params, tx: 0 }),
    script: (sql, params) => call<unknown[]>({ op: 'script', sql, params }),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const tx = await call<number>({ op: 'begin' });
      let result: T;
      try {
        result = await fn({
          query: <R>(sql: string, params: unknown[] = []) => call<R[]>({ op: 'query', sql, params, tx }),
        });
      } catch (err) {
        await call({ op: 'end', tx, commit: false }).catch(() => undefined);
        throw err;
      }
      await call({ op: 'end', tx, commit: true });
      return result;
    },
    async close() {
      if (closing) return;
      closing = true;
      try {
        if (!lost) await call({ op: 'close' });
      } finally {
        // nothing is waiting now: what came after close was refused
        lost ??= new EmbeddedDatabaseLost('the embedded database is closed');
        await worker.terminate();
      }
    },
  };
}
