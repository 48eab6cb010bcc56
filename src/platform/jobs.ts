// Durable background work: a job queue in the shared database, on pg-boss (SKIP LOCKED claims,
// retries with backoff, expiry, dead letters, priorities, run-at times, cancellation). The same
// queue on both storage paths: pg-boss keeps its own small pool on PostgreSQL, and speaks to the
// embedded PGlite through its worker thread (db.ts `script`, the semantics of pg-boss's
// `fromPglite`), so its polls and upkeep never hold the HTTP thread. A job survives kill -9: it is a row until a worker
// settles it, and a worker that stops sending heartbeats loses its claim. Instances that share
// the database share the queue, and a job is held by one worker at a time.
//
// A job sent wakes an idle worker at once; polling every `pollingIntervalSeconds` stays as the
// floor. On PostgreSQL the queues notify (LISTEN/NOTIFY: any instance's workers wake). On PGlite,
// one process's database, the instance that sends is the only one, and it wakes one idle worker
// of the queue itself: pg-boss's notification wakes every worker of a queue, and on PGlite's one
// connection their sixteen claims queued in front of the delivery (npm run bench:webhooks, event
// to first attempt p50 64-100 ms; 18-40 ms waking one). A send inside a transaction cannot be
// claimed before its commit there: every query waits for the transaction holding the connection.
// A queue runs `concurrency` workers of one job each: a worker that finished a job claims the
// next at once (so a backlog drains at the speed of the handlers, not of the poll), and one slow
// job holds one worker only. Jobs sent with a `group` (a webhook endpoint, say) run at most `perGroup` at
// once over all instances (pg-boss counts the group's active jobs when it claims; two claims at
// the same moment may pass the bound by one), so one slow group cannot hold every worker.
import { type Db as BossDb, type Job as BossJob, PgBoss } from 'pg-boss';
import type { Db, Queryable } from './db.ts';
import type { Logger } from './logger.ts';

/** How a queue retries and expires its jobs. */
export interface QueuePolicy {
  /** Attempts after the first before a job is dead (copied to `<name>.dead`); 2 by default. */
  retryLimit?: number;
  /** Seconds before the first retry, doubled each time with jitter; 1 by default. */
  retryDelaySeconds?: number;
  /** The longest wait between retries, in seconds; 1 hour by default. */
  retryDelayMaxSeconds?: number;
  /** How long one attempt may run before it counts as failed, in seconds; 15 minutes by default. */
  expireInSeconds?: number;
  /** How many of this queue's jobs one instance runs at once (at most JOB_WORKERS); 1 by default. */
  concurrency?: number;
  /**
   * How many jobs of one group (SendOptions.group) run at once, over all instances that share the
   * queue; no bound by default.
   */
  perGroup?: number;
  /** How long a completed job's row is kept, in seconds; pg-boss's 7 days by default. */
  keepSeconds?: number;
}

export interface SendOptions {
  /** Run no earlier than this time. */
  startAfter?: Date;
  /** Higher runs first among jobs that are due; 0 by default. */
  priority?: number;
  /** Send inside this transaction: the job exists only if the transaction commits. */
  tx?: Queryable;
  /** The group the job belongs to, bounded by the queue's `perGroup`. */
  group?: string;
}

export interface JobContext {
  id: string;
  /** 0 on the first attempt. */
  retryCount: number;
  /** Aborted when the instance stops or the attempt expires. */
  signal: AbortSignal;
}

export type JobHandler<T> = (data: T, job: JobContext) => Promise<void>;

export interface JobState {
  id: string;
  name: string;
  state: 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';
  retryCount: number;
  startAfter: Date;
}

export interface Jobs {
  /** Declares a queue and the handler this instance runs for it (when it runs workers). */
  define<T extends object>(name: string, handler: JobHandler<T>, policy?: QueuePolicy): Promise<void>;
  /** Enqueues a job; its id. */
  send<T extends object>(name: string, data: T, options?: SendOptions): Promise<string>;
  /** Sends a job to a defined queue on a cron schedule (UTC), once per occurrence across instances. */
  schedule(name: string, cron: string): Promise<void>;
  /** Drops the cron schedule of a queue. */
  unschedule(name: string): Promise<void>;
  /** Cancels a job that has not run yet (a running one finishes its attempt). */
  cancel(name: string, id: string): Promise<void>;
  get(name: string, id: string): Promise<JobState | null>;
  /** Whether this instance runs handlers (JOB_WORKERS > 0). */
  readonly working: boolean;
  stop(): Promise<void>;
}

export interface JobsOptions {
  /** JOB_WORKERS: the most jobs of one queue this instance runs at once; 0 serves HTTP only. */
  workers: number;
  logger: Logger;
  /** The idle poll, the floor under notifications; 2 s by default. */
  pollingIntervalSeconds?: number;
}

/** A transaction of ours as pg-boss's `db` option, so a job is sent with the rows it belongs to. */
function inTransaction(tx: Queryable): BossDb {
  return {
    async executeSql(text: string, values?: unknown[]) {
      return { rows: await tx.query(text, values ?? []) };
    },
  };
}

export async function openJobs(db: Db, options: JobsOptions): Promise<Jobs> {
  /** PGlite: this instance is the only one, and wakes its own workers (see above). */
  const wakesItself = db.kind === 'pglite';
  const common = {
    schema: 'pgboss',
    // cron schedules (`schedule`), run once per occurrence across instances
    schedule: true,
    useListenNotify: !wakesItself,
    // a worker's claim lapses after 10 s without heartbeats; the supervisor looks every 10 s
    superviseIntervalSeconds: 10,
    warningSlowQuerySeconds: 30,
  };
  const script = db.kind === 'pglite' ? db.script : undefined;
  const boss = script
    ? new PgBoss({
        ...common,
        db: { executeSql: async (text, values) => ({ rows: await script(text, values) }) },
        backend: 'pglite',
      })
    : new PgBoss({
        ...common,
        connectionString: db.url ?? '',
        max: 4,
        application_name: 'eurus-jobs',
        // pg-boss's 10 s default fires when the event loop was held that long (the directory's
        // index built at 1M on a busy machine): the connection was there, the start failed
        connectionTimeoutMillis: 60_000,
      });
  boss.on('error', (err: Error) => options.logger.warn({ err }, 'job queue error'));
  boss.on('warning', (warning: unknown) => options.logger.debug({ warning }, 'job queue warning'));
  await boss.start();

  const polling = options.pollingIntervalSeconds ?? 2;
  const defined = new Set<string>();
  let stopped = false;
  /** This instance's workers by queue, and whether each is running a job now. */
  const workers = new Map<string, Array<{ id?: string; busy: boolean }>>();
  /** The next worker a send wakes, by queue (in turn, so no one worker takes every job). */
  const turns = new Map<string, number>();

  /** Wakes one idle worker of `name` (none idle: the busy ones claim the next job as they finish). */
  const wakeOne = (name: string) => {
    const list = workers.get(name);
    if (!list || list.length === 0) return;
    const start = turns.get(name) ?? 0;
    for (let k = 0; k < list.length; k++) {
      const worker = list[(start + k) % list.length]!;
      if (worker.busy || worker.id === undefined) continue;
      turns.set(name, (start + k + 1) % list.length);
      boss.notifyWorker(worker.id);
      return;
    }
  };

  return {
    working: options.workers > 0,
    async define<T extends object>(name: string, handler: JobHandler<T>, policy: QueuePolicy = {}) {
      if (defined.has(name)) throw new Error(`job queue ${name} is defined twice`);
      defined.add(name);
      const dead = `${name}.dead`;
      await boss.createQueue(dead, { retentionSeconds: 30 * 86_400, deleteAfterSeconds: 30 * 86_400 });
      await boss.createQueue(name, {
        retryLimit: policy.retryLimit ?? 2,
        retryDelay: policy.retryDelaySeconds ?? 1,
        retryBackoff: true,
        retryDelayMax: policy.retryDelayMaxSeconds ?? 3600,
        expireInSeconds: policy.expireInSeconds ?? 900,
        heartbeatSeconds: 10,
        deadLetter: dead,
        notify: !wakesItself,
        ...(policy.keepSeconds === undefined ? {} : { deleteAfterSeconds: policy.keepSeconds }),
      });
      // a queue made before this instance woke its own workers still asks pg-boss to notify
      if (wakesItself) await boss.updateQueue(name, { notify: false });
      const concurrency = Math.min(policy.concurrency ?? 1, options.workers);
      if (concurrency <= 0 || stopped) return;
      const list: Array<{ id?: string; busy: boolean }> = [];
      workers.set(name, list);
      for (let i = 0; i < concurrency; i++) {
        const self: { id?: string; busy: boolean } = { busy: false };
        list.push(self);
        self.id = await boss.work<T>(
          name,
          {
            batchSize: 1,
            ...(policy.perGroup === undefined ? {} : { groupConcurrency: policy.perGroup }),
            pollingIntervalSeconds: polling,
            // a notification wakes a worker for a job due now; retries and run-at times come due
            // without one, so the poll stays as short
            notifyPollingIntervalSeconds: polling,
          },
          async ([job]: BossJob<T>[]) => {
            self.busy = true;
            try {
              await handler(job!.data, { id: job!.id, retryCount: job!.retryCount, signal: job!.signal });
            } finally {
              self.busy = false;
              // claim the next job at once: where there was one, there are likely more
              if (self.id !== undefined) boss.notifyWorker(self.id);
            }
          },
        );
      }
    },
    async send(name, data, sendOptions = {}) {
      const id = await boss.send(name, data, {
        ...(sendOptions.startAfter ? { startAfter: sendOptions.startAfter } : {}),
        ...(sendOptions.priority !== undefined ? { priority: sendOptions.priority } : {}),
        ...(sendOptions.tx ? { db: inTransaction(sendOptions.tx) } : {}),
        ...(sendOptions.group ? { group: { id: sendOptions.group } } : {}),
      });
      if (id === null) throw new Error(`job queue ${name} refused a job`);
      if (wakesItself && !(sendOptions.startAfter && sendOptions.startAfter.getTime() > Date.now()))
        wakeOne(name);
      return id;
    },
    async schedule(name, cron) {
      await boss.schedule(name, cron, {}, { tz: 'UTC' });
    },
    async unschedule(name) {
      await boss.unschedule(name);
    },
    async cancel(name, id) {
      await boss.cancel(name, id);
    },
    async get(name, id) {
      const job = await boss.getJobById(name, id);
      if (!job) return null;
      return {
        id: job.id,
        name: job.name,
        state: job.state,
        retryCount: job.retryCount,
        startAfter: job.startAfter,
      };
    },
    async stop() {
      stopped = true;
      // running handlers get up to 10 s to settle; the rest are claimed again elsewhere
      await boss.stop({ graceful: true, timeout: 10_000, close: true });
    },
  };
}
