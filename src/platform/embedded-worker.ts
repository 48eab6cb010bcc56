// The worker thread that owns the embedded database (PGlite): every statement runs here, off the
// thread that serves HTTP (embedded.ts is the other end). Statements run one at a time in the
// order they came; a transaction holds the database from BEGIN to its end, as PGlite's own lock
// does, and the statements of other callers wait for it.
import { parentPort, workerData } from 'node:worker_threads';
import { existsSync, mkdirSync, openAsBlob, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite, type PGliteOptions, type Transaction } from '@electric-sql/pglite';
import { extract } from 'tar';
import { templateFile } from './pglite-template.ts';
import { startRestCompaction } from './rest.ts';

export type Request =
  /** `tx` 0: outside any transaction */
  | { id: number; op: 'query'; sql: string; params: unknown[]; tx: number }
  /** pg-boss's statements: several without values (their rows together), or one with values */
  | { id: number; op: 'script'; sql: string; params: unknown[] | undefined }
  /** replies with the transaction's number once BEGIN has run */
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'close' };

/** What a PostgreSQL error carries (pg-protocol's DatabaseError), copied field by field. */
export type WireError = Record<string, string | number | undefined> & { message: string };

export type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError };

/** The worker's first message: ready, or why not. */
export type Started = { ready: true } | { ready: false; error: WireError };

/**
 * PostgreSQL's buffer pool, inside PGlite's WebAssembly memory, which never shrinks: with the
 * default 128MB a first start from the demo cluster left that memory 156 MiB resident at rest.
 * Pages past the pool come from the operating system's file cache.
 */
const SHARED_BUFFERS = '32MB';

const INT8 = 20;
const BYTEA = 17;

/**
 * PGlite's own bytea parser calls parseInt for every byte: reading 20,000 embeddings took 2 s at
 * each start. Node decodes hex natively (as node-postgres does), into a buffer of the value's own
 * size, so that posting it to the other thread copies nothing more.
 */
function bytesOf(value: string): Uint8Array {
  const bytes = Buffer.allocUnsafeSlow((value.length - 2) >> 1);
  bytes.write(value.slice(2), 'hex');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
const FIELDS = [
  'name',
  'code',
  'severity',
  'detail',
  'hint',
  'position',
  'internalPosition',
  'internalQuery',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'file',
  'line',
  'routine',
  'query',
];

export function toWire(err: unknown): WireError {
  if (!(err instanceof Error)) return { message: String(err) };
  const wire: WireError = { message: err.message };
  for (const field of FIELDS) {
    const value = (err as unknown as Record<string, unknown>)[field];
    if (typeof value === 'string' || typeof value === 'number') wire[field] = value;
  }
  return wire;
}

const port = parentPort;
if (port) {
  const { dataDir, cluster } = workerData as { dataDir: string; cluster?: string };
  try {
    const db = await open(dataDir, cluster, {
      parsers: { [INT8]: (value: string) => Number(value), [BYTEA]: bytesOf },
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`],
    });
    serve(db, port);
    // the start (a cluster unpacked, migrations) leaves this heap grown too
    startRestCompaction();
    port.postMessage({ ready: true } satisfies Started);
  } catch (err) {
    port.postMessage({ ready: false, error: toWire(err) } satisfies Started);
  }
}

/**
 * Opens the database; a new one starts as a copy of `cluster` (a dumped cluster, e.g. the demo
 * directory's, when the caller has one), else of the installed PGlite's fresh cluster
 * (pglite-template.ts), else PGlite runs initdb. A copy that fails to open is removed (only from
 * a folder that was empty) and the next way is tried.
 */
async function open(dataDir: string, cluster: string | undefined, options: PGliteOptions): Promise<PGlite> {
  const memory = dataDir === 'memory://';
  if (!memory) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const empty = memory || readdirSync(dataDir).length === 0;
  if (empty || !existsSync(join(dataDir, 'PG_VERSION'))) {
    for (const file of [cluster, templateFile()]) {
      if (file === undefined || !existsSync(file)) continue;
      try {
        if (memory) return await PGlite.create(dataDir, { ...options, loadDataDir: await openAsBlob(file) });
        await unpack(file, dataDir);
        return await PGlite.create(dataDir, options);
      } catch (err) {
        if (!empty) throw err;
        if (!memory)
          for (const name of readdirSync(dataDir)) rmSync(join(dataDir, name), { recursive: true });
      }
    }
  }
  return PGlite.create(dataDir, options);
}

/**
 * Unpacks a dumped cluster into the folder, streamed from its file. Given as `loadDataDir`,
 * PGlite holds the whole archive, unzipped and untarred, in memory at once (the demo
 * directory's: 88 MB, 219 MB unzipped), and the thread's malloc arena kept about 250 MiB of
 * it resident at rest; PGlite also keeps its options, the archive with them, while it is open.
 */
async function unpack(file: string, dataDir: string): Promise<void> {
  const problems: string[] = [];
  await extract({
    file,
    cwd: dataDir,
    preserveOwner: false,
    // the dump's paths start with `/`, which is taken off (TAR_ENTRY_INFO); anything else, e.g. a
    // truncated or unknown archive, is not a cluster
    onwarn: (code, message) => {
      if (code !== 'TAR_ENTRY_INFO') problems.push(`${code}: ${String(message)}`);
    },
  });
  if (problems.length > 0) throw new Error(`${file} is not a whole cluster: ${problems[0]}`);
}

function serve(db: PGlite, port: NonNullable<typeof parentPort>): void {
  /** The tail of the statements queued so far: each runs when the one before it has settled. */
  let tail: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(run: () => Promise<T>): Promise<T> => {
    const result = tail.then(run);
    tail = result.catch(() => undefined);
    return result;
  };
  const open = new Map<number, { tx: Transaction; end(commit: boolean): void; done: Promise<void> }>();
  const ROLLBACK = Symbol('rollback');

  // replies of one turn go back in one message
  let replies: Reply[] = [];
  const send = (reply: Reply) => {
    if (replies.length === 0) setImmediate(flush);
    replies.push(reply);
  };
  const flush = () => {
    const batch = replies;
    replies = [];
    try {
      port.postMessage(batch);
    } catch {
      // a value the structured clone cannot carry: each reply alone, the bad one as an error
      for (const reply of batch) {
        try {
          port.postMessage([reply]);
        } catch (err) {
          port.postMessage([{ id: reply.id, ok: false, error: toWire(err) } satisfies Reply]);
        }
      }
    }
  };
  const answer = (id: number, work: Promise<unknown>): void =>
    void work.then(
      (value) => send({ id, ok: true, value }),
      (err: unknown) => send({ id, ok: false, error: toWire(err) }),
    );

  const handle = (req: Request) => {
    switch (req.op) {
      case 'query': {
        if (req.tx === 0) {
          answer(
            req.id,
            inTurn(async () => (await db.query(req.sql, req.params)).rows),
          );
          return;
        }
        const entry = open.get(req.tx);
        answer(
          req.id,
          entry
            ? entry.tx.query(req.sql, req.params).then((r) => r.rows)
            : Promise.reject(new Error('Transaction is closed')),
        );
        return;
      }
      case 'script':
        answer(
          req.id,
          inTurn(async () => {
            if (req.params?.length) return (await db.query(req.sql, req.params)).rows;
            try {
              return (await db.exec(req.sql)).flatMap((r) => r.rows);
            } catch (err) {
              // a failed BEGIN ... COMMIT block leaves its transaction aborted: end it before the
              // next statement runs, as a pool would hand that one a fresh connection
              await db.exec('ROLLBACK').catch(() => undefined);
              throw err;
            }
          }),
        );
        return;
      case 'begin':
        void inTurn(
          () =>
            new Promise<void>((released) => {
              let end!: (commit: boolean) => void;
              const ended = new Promise<boolean>((resolve) => (end = resolve));
              let begun = false;
              const body = async (tx: Transaction) => {
                begun = true;
                open.set(req.id, { tx, end, done });
                send({ id: req.id, ok: true, value: req.id });
                if (!(await ended)) throw ROLLBACK;
              };
              const done: Promise<void> = db
                .transaction(body)
                .catch((err: unknown) => {
                  if (err !== ROLLBACK) throw err;
                })
                .finally(() => {
                  open.delete(req.id);
                  released();
                });
              // BEGIN itself failed: the caller learns it from its begin (a failed COMMIT, from its end)
              done.catch((err: unknown) => {
                if (!begun) send({ id: req.id, ok: false, error: toWire(err) });
              });
            }),
        );
        return;
      case 'end': {
        const entry = open.get(req.tx);
        if (!entry) {
          send({ id: req.id, ok: false, error: { message: 'Transaction is closed' } });
          return;
        }
        entry.end(req.commit);
        answer(req.id, entry.done);
        return;
      }
      case 'close':
        answer(
          req.id,
          inTurn(() => db.close()),
        );
        return;
    }
  };

  port.on('message', (batch: Request[]) => {
    for (const req of batch) handle(req);
  });
}
