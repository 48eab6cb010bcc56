// One usage record per billable call: who, what, how much, what it cost in integer
// nano-EUR, how it ended. GET /v1/usage of each service sums these rows and nothing else.
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { Queryable } from './db.ts';
import { newId, pooledRandomBytes } from './ids.ts';
import type { Principal } from './principal.ts';
import { PRIVATE_DIR, PRIVATE_FILE } from './private.ts';
import type { ServiceName } from './app.ts';

export interface UsageRecord {
  service: ServiceName;
  /** Model id (model API) or interface name (`search`, `places`, `sales`, `concierge`). */
  model: string | null;
  endpoint: string;
  inputTokens?: number;
  outputTokens?: number;
  audioSeconds?: number;
  images?: number;
  steps?: number;
  /** Billable units of the directory (requests, replies, tasks). */
  units?: number;
  costNano: number;
  status: number;
  latencyMs: number;
  streamed?: boolean;
  /** The client left before the answer was complete (billed for what was produced). */
  disconnected?: boolean;
}

export const NANO_PER_EUR = 1_000_000_000;

/** nano-EUR (integer) to the wire's decimal string: 123450 -> "0.000123450". */
export function formatEur(nano: number): string {
  const sign = nano < 0 ? '-' : '';
  const abs = Math.abs(Math.round(nano));
  const whole = Math.floor(abs / NANO_PER_EUR);
  const frac = String(abs % NANO_PER_EUR).padStart(9, '0');
  return `${sign}${whole}.${frac}`;
}

/** A price for people to read, from its table: 500000000 -> "0.50 EUR", with `decimals` 0: "99 EUR". */
export function priceText(nano: number, decimals = 2): string {
  return `${(nano / NANO_PER_EUR).toFixed(decimals)} EUR`;
}

/** The columns of a usage row, with the element type of the array each is sent in. */
const COLUMNS = [
  ['id', 'text'],
  ['service', 'text'],
  ['account_id', 'text'],
  ['project_id', 'text'],
  ['key_id', 'text'],
  ['model', 'text'],
  ['endpoint', 'text'],
  ['input_tokens', 'int8'],
  ['output_tokens', 'int8'],
  ['audio_seconds', 'float8'],
  ['images', 'int8'],
  ['steps', 'int8'],
  ['units', 'int8'],
  ['cost_nano', 'int8'],
  ['status', 'int4'],
  ['latency_ms', 'int4'],
  ['streamed', 'bool'],
  ['disconnected', 'bool'],
  ['created', 'int8'],
  ['day', 'date'],
] as const;
// one array a column (unnest): the statement's text and parameter count are the same for every
// batch, and PGlite parses 20 arrays rather than 20 values a row (bench/usage-insert.ts)
const INSERT = `insert into usage_records (${COLUMNS.map(([name]) => name).join(', ')})
  select * from unnest(${COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')})
  on conflict (id) do nothing`;
/** Rows of one insert at most (a journal flush of FLUSH_AT records is one statement). */
const MAX_BATCH = 1000;

function usageRow(principal: Principal, record: UsageRecord): unknown[] {
  const now = Date.now();
  return [
    newId('usg', now),
    record.service,
    principal.accountId,
    principal.projectId,
    principal.keyId,
    record.model,
    record.endpoint,
    record.inputTokens ?? 0,
    record.outputTokens ?? 0,
    record.audioSeconds ?? 0,
    record.images ?? 0,
    record.steps ?? 0,
    record.units ?? 0,
    Math.round(record.costNano),
    record.status,
    Math.round(record.latencyMs),
    record.streamed ?? false,
    record.disconnected ?? false,
    Math.floor(now / 1000),
    dayOf(now),
  ];
}

let lastDay = { number: -1, text: '' };
/** The UTC date of `ms` as YYYY-MM-DD (the day changes once a day: kept, not formatted per record). */
function dayOf(ms: number): string {
  const number = Math.floor(ms / 86_400_000);
  if (number !== lastDay.number) lastDay = { number, text: new Date(ms).toISOString().slice(0, 10) };
  return lastDay.text;
}

async function insertRows(db: Queryable, rows: unknown[][]): Promise<void> {
  // a record replayed from the journal (below) may be stored already: its id says so
  await db.query(
    INSERT,
    COLUMNS.map((_, c) => rows.map((row) => row[c])),
  );
}

interface Pending {
  row: unknown[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

interface Queue {
  pending: Pending[];
  /** A flush is scheduled or running: new records join its next batch. */
  flushing: boolean;
}

const queues = new WeakMap<Queryable, Queue>();

// Group commit: records wait for the end of the current event-loop turn (setImmediate), and
// while one insert is in flight, for it to finish; then all that are waiting go in one insert.
// Under load the database sees one statement (one commit) per batch rather than one per call.
async function flush(db: Queryable, queue: Queue): Promise<void> {
  while (queue.pending.length > 0) {
    const batch = queue.pending.splice(0, MAX_BATCH);
    try {
      await insertRows(
        db,
        batch.map((p) => p.row),
      );
      for (const p of batch) p.resolve();
    } catch (err) {
      if (batch.length === 1) batch[0]?.reject(err);
      // One bad row must not lose the others: write them one by one, each with its own outcome.
      else for (const p of batch) await insertRows(db, [p.row]).then(p.resolve, p.reject);
    }
  }
  queue.flushing = false;
}

/** Writes one usage record now; resolves when it is stored. */
export async function recordUsage(db: Queryable, principal: Principal, record: UsageRecord): Promise<void> {
  await insertRows(db, [usageRow(principal, record)]);
}

/**
 * Stores one usage record durably before it resolves. With a journal open for `db`
 * (openUsageJournal) the record is appended to the journal file at once and the promise is
 * already resolved: the database gets it within JOURNAL_FLUSH_MS, in a batch, off the request's
 * path (a usage read in this process first waits for it: flushUsage). Without one, it is written
 * with the others of the same moment (group commit) and resolves once stored. For a caller that
 * awaits the record before it answers (chat), so a call answered is a call billed; a caller that
 * records after answering uses recordUsage.
 */
export function recordUsageBatched(db: Queryable, principal: Principal, record: UsageRecord): Promise<void> {
  const journal = journals.get(db);
  if (journal) {
    journal.append(usageRow(principal, record));
    return Promise.resolve();
  }
  let queue = queues.get(db);
  if (!queue) {
    queue = { pending: [], flushing: false };
    queues.set(db, queue);
  }
  const row = usageRow(principal, record);
  const target = queue;
  return new Promise<void>((resolve, reject) => {
    target.pending.push({ row, resolve, reject });
    if (!target.flushing) {
      target.flushing = true;
      setImmediate(() => void flush(db, target));
    }
  });
}

// --- the usage journal ---------------------------------------------------------------------
//
// A chat call's usage record is what bills it, so it must survive a crash of the process between
// the answer and the database. Awaiting the insert before answering did that, at the price of a
// database round trip (and, on PGlite, the insert itself) inside every call. The journal keeps
// the guarantee off that path: before a call answers, its record is appended (one write(2), a
// line of JSON) to a segment file of this process's own; the kernel holds the bytes from then on,
// so kill -9, an out-of-memory kill or a crash cannot lose them (a power loss can: no fsync).
// Every JOURNAL_FLUSH_MS the records appended since go to the database in one insert
// (`on conflict (id) do nothing`); a segment is closed after SEGMENT_MS and deleted once all its
// records are stored (a replay may insert a stored record again: it is kept once). At start-up, and every
// minute, segments left by a process that is gone are replayed the same way: the records of a
// killed process reach the database when any process with the same journal starts.
//
// Segments are named usage-<pid>-<instance>-<n>.jsonl. A segment of a process that is no longer
// alive is replayed at once; one of this process's pid (a predecessor in a container restarted
// with the same pid, or another thread of this process) only once it has not been written for
// STALE_MS, far longer than a live writer keeps a segment open.

/** How often records go from the journal to the database (and the most a usage read waits). */
export const JOURNAL_FLUSH_MS = 50;
/** Pending records that start a flush before the interval is over. */
const FLUSH_AT = 1000;
/**
 * A segment stays open across flushes this long (or this many rows), then is closed and, once
 * all its rows are stored, deleted. A segment made and deleted at every flush cost an open(2)
 * that blocked the request thread about a millisecond, 20 times a second, on a busy disk.
 */
const SEGMENT_MS = 1000;
const SEGMENT_ROWS = 20_000;
/** A segment of this process's pid untouched for this long belongs to no live writer. */
const STALE_MS = 30_000;
const SEGMENT = /^usage-(\d+)-([0-9a-f]+)-(\d+)\.jsonl$/;

interface Logs {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

interface Segment {
  path: string;
  fd: number | undefined;
  opened: number;
  written: number;
  /** batches of its rows not stored yet */
  unstored: number;
}

class UsageJournal {
  readonly #db: Queryable;
  readonly #dir: string;
  readonly #logger: Logs | undefined;
  readonly #instance = `${threadId.toString(16)}${pooledRandomBytes(4).toString('hex')}`;
  #segment = 0;
  /** the segment appended to, open */
  #open: Segment | undefined;
  /** rows appended since the last flush */
  #rows: unknown[][] = [];
  /** rows handed to the database, not stored yet, oldest first, each with its segment */
  readonly #batches: { segment: Segment; rows: unknown[][] }[] = [];
  #timer: NodeJS.Timeout | undefined;
  #rotation: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  readonly #sweeper: NodeJS.Timeout;

  constructor(db: Queryable, dir: string, logger: Logs | undefined) {
    this.#db = db;
    this.#dir = dir;
    this.#logger = logger;
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
    this.#sweeper = setInterval(() => void this.recover().catch(() => undefined), 60_000);
    this.#sweeper.unref();
  }

  /** Appends one row to the open segment (durable once this returns) and schedules a flush. */
  append(row: unknown[]): void {
    if (this.#open === undefined) {
      const path = join(this.#dir, `usage-${process.pid}-${this.#instance}-${this.#segment++}.jsonl`);
      const fd = openSync(path, 'a', PRIVATE_FILE);
      this.#open = { path, fd, opened: Date.now(), written: 0, unstored: 0 };
    }
    const segment = this.#open;
    const line = Buffer.from(`${JSON.stringify(row)}\n`);
    // writeSync may write part of a buffer: the rest follows (a torn last line is never replayed)
    for (let at = 0; at < line.length;) at += writeSync(segment.fd!, line, at);
    segment.written++;
    this.#rows.push(row);
    if (this.#rows.length >= FLUSH_AT) this.flush().catch(() => undefined);
    else if (!this.#timer) {
      this.#timer = setTimeout(() => this.#flush(false).catch(() => undefined), JOURNAL_FLUSH_MS);
    }
  }

  /** Closes the open segment and stores every row so far; resolves when they are stored. */
  flush(): Promise<void> {
    return this.#flush(true);
  }

  /** Stores every row so far; closes the open segment when asked to, or when it is old or full. */
  #flush(close: boolean): Promise<void> {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const segment = this.#open;
    if (segment && this.#rows.length > 0) {
      segment.unstored++;
      this.#batches.push({ segment, rows: this.#rows });
      this.#rows = [];
    }
    if (segment) {
      if (close || Date.now() - segment.opened >= SEGMENT_MS || segment.written >= SEGMENT_ROWS) {
        this.#close(segment);
      } else if (!this.#rotation) {
        // closed when it is due even if no row comes to flush it
        this.#rotation = setTimeout(
          () => {
            this.#rotation = undefined;
            this.#flush(false).catch(() => undefined);
          },
          segment.opened + SEGMENT_MS - Date.now(),
        );
        this.#rotation.unref();
      }
    }
    // one flush at a time; a flush asked for meanwhile runs after it (and takes what came since)
    const previous = this.#flushing?.catch(() => undefined) ?? Promise.resolve();
    const run = previous.then(() => this.#store());
    this.#flushing = run;
    run.then(
      () => {
        if (this.#flushing === run) this.#flushing = undefined;
      },
      () => undefined,
    );
    return run;
  }

  #close(segment: Segment): void {
    if (segment.fd !== undefined) closeSync(segment.fd);
    segment.fd = undefined;
    if (this.#open === segment) this.#open = undefined;
    if (this.#rotation) {
      clearTimeout(this.#rotation);
      this.#rotation = undefined;
    }
    if (segment.unstored === 0) removeFile(segment.path);
  }

  async #store(): Promise<void> {
    while (this.#batches.length > 0) {
      const { segment, rows } = this.#batches[0]!;
      try {
        for (let i = 0; i < rows.length; i += MAX_BATCH)
          await insertRows(this.#db, rows.slice(i, i + MAX_BATCH));
      } catch (err) {
        // the rows stay in their file and in memory: tried again on the next flush, and after a
        // crash by the next start; the caller of flush() learns of it
        this.#logger?.error({ err, segment: segment.path }, 'usage records not stored yet');
        if (!this.#timer) this.#timer = setTimeout(() => this.#flush(false).catch(() => undefined), 1000);
        throw err;
      }
      this.#batches.shift();
      segment.unstored--;
      if (segment.fd === undefined && segment.unstored === 0) removeFile(segment.path);
    }
  }

  /** Replays the segments of writers that are gone (see above); the number of rows replayed. */
  async recover(): Promise<number> {
    let replayed = 0;
    for (const name of readdirSync(this.#dir).sort()) {
      const match = SEGMENT.exec(name);
      if (!match || match[2] === this.#instance) continue;
      const path = join(this.#dir, name);
      const pid = Number(match[1]);
      if (pid === process.pid || alive(pid)) {
        let age: number;
        try {
          age = Date.now() - statSync(path).mtimeMs;
        } catch {
          continue; // stored and removed by its writer meanwhile
        }
        if (age < STALE_MS) continue;
      }
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        continue;
      }
      // a line without its newline was being written when the process died: that call never answered
      const lines = text.split('\n').slice(0, -1);
      const rows: unknown[][] = [];
      for (const line of lines) {
        try {
          rows.push(JSON.parse(line) as unknown[]);
        } catch {
          this.#logger?.warn({ segment: path }, 'a usage journal line is not JSON: skipped');
        }
      }
      for (let i = 0; i < rows.length; i += MAX_BATCH)
        await insertRows(this.#db, rows.slice(i, i + MAX_BATCH));
      removeFile(path);
      replayed += rows.length;
    }
    return replayed;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await this.flush();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // removed already (by a recovering process)
  }
}

const journals = new WeakMap<Queryable, UsageJournal>();

/**
 * The journal directory of one database under `base`: records are replayed into the database
 * they were written for, whichever process starts first (a PostgreSQL URL without its password,
 * or the PGlite data directory, names it).
 */
export function usageJournalDir(
  base: string,
  storage: { databaseUrl?: string | undefined; dataDir: string },
): string {
  let identity = `pglite:${resolve(storage.dataDir)}`;
  if (storage.databaseUrl) {
    const url = new URL(storage.databaseUrl);
    url.password = '';
    identity = `postgres:${url.toString()}`;
  }
  return join(base, createHash('sha256').update(identity).digest('hex').slice(0, 16));
}

/**
 * Opens the usage journal of `db` in `dir` (one directory per database: see usageJournalDir),
 * after replaying what writers that are gone left in it; recordUsageBatched then appends to it.
 * Returns how many records were replayed.
 */
export async function openUsageJournal(db: Queryable, dir: string, logger?: Logs): Promise<number> {
  const journal = new UsageJournal(db, dir, logger);
  const replayed = await journal.recover();
  journals.set(db, journal);
  return replayed;
}

/** Stores what this process's journal holds for `db` now (before a usage read); no-op without one. */
export async function flushUsage(db: Queryable): Promise<void> {
  await journals.get(db)?.flush();
}

/** Stores what the journal holds and closes it (before the database closes). */
export async function closeUsageJournal(db: Queryable): Promise<void> {
  const journal = journals.get(db);
  if (!journal) return;
  journals.delete(db);
  await journal.close();
}
