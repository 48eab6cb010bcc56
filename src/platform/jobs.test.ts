// The job queue on both storage paths: PGlite in memory and PostgreSQL (a fresh database per
// suite, as every suite has). Queue names are unique per test. Its assertions are timed (a job
// woken within 400 ms), so the file runs alone; the suites across instances, untimed, are in
// jobs-instances.test.ts.
import { afterAll, describe, expect, it } from 'vitest';
import { until as waitFor } from '../../contract-tests/support/client.ts';
import { createTestDatabase, storages, type TestDatabase } from '../../contract-tests/support/server.ts';
import { type Db, openDb } from './db.ts';
import { type Jobs, openJobs } from './jobs.ts';
import { createLogger } from './logger.ts';

const logger = createLogger('silent', 'jobs-test');
let n = 0;
const queue = (what: string) => `test.${what}.${process.pid}.${Date.now()}.${n++}`;

/** Polls every 50 ms (the timed suites assert on wake-ups within 400 ms). */
const until = (check: () => boolean | Promise<boolean>, ms = 20_000) => waitFor('the jobs', check, ms, 50);

describe.each(await storages())('jobs on %s', (storage) => {
  let database: TestDatabase | undefined;
  let db: Db;
  let jobs: Jobs;
  const started = (async () => {
    if (storage === 'postgres') database = await createTestDatabase();
    db = await openDb({ databaseUrl: database?.url, dataDir: 'memory://' });
    jobs = await openJobs(db, { workers: 8, logger, pollingIntervalSeconds: 0.5 });
  })();
  afterAll(async () => {
    await started;
    await jobs.stop();
    await db.close();
    await database?.drop();
  });

  it('runs a job sent, woken at once rather than by the poll', async () => {
    await started;
    const name = queue('once');
    const ran: Array<{ data: unknown; at: number }> = [];
    await jobs.define<{ x: number }>(name, async (data) => {
      ran.push({ data, at: Date.now() });
    });
    await new Promise((r) => setTimeout(r, 1000)); // let the worker go idle
    const sent = Date.now();
    const id = await jobs.send(name, { x: 1 });
    await until(() => ran.length === 1);
    expect(ran[0]?.data).toEqual({ x: 1 });
    expect(ran[0]!.at - sent).toBeLessThan(400); // the poll is 500 ms
    await until(async () => (await jobs.get(name, id))?.state === 'completed');
  });

  it('wakes workers for jobs sent at once, in a transaction too, each job to its own worker', async () => {
    await started;
    // an instance whose poll is far off: only the wake-up can run these in time
    const slow = await openJobs(db, { workers: 8, logger, pollingIntervalSeconds: 30 });
    try {
      const name = queue('wake');
      let running = 0;
      let most = 0;
      const ran: Array<{ k: number; at: number }> = [];
      await slow.define<{ k: number }>(
        name,
        async (data) => {
          most = Math.max(most, ++running);
          await new Promise((r) => setTimeout(r, 300));
          running--;
          ran.push({ k: data.k, at: Date.now() });
        },
        { concurrency: 8 },
      );
      await new Promise((r) => setTimeout(r, 1000)); // every worker idle, waiting for its poll
      const sent = Date.now();
      await db.transaction(async (tx) => {
        await slow.send(name, { k: 0 }, { tx });
        // PGlite: the worker woken now claims once the transaction commits, not before
        await new Promise((r) => setTimeout(r, 200));
      });
      for (let k = 1; k < 6; k++) await slow.send(name, { k });
      await until(() => ran.length === 6, 10_000);
      // six jobs of 300 ms, each woken at once, on workers of their own: well under one poll
      expect(Math.max(...ran.map((r) => r.at)) - sent).toBeLessThan(3000);
      expect(most).toBeGreaterThanOrEqual(4);
      expect(ran.map((r) => r.k).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    } finally {
      await slow.stop();
    }
  });

  it('retries a failing job, then moves it to the dead letters', async () => {
    await started;
    const name = queue('retry');
    const attempts: number[] = [];
    await jobs.define(
      name,
      async (_data, job) => {
        attempts.push(job.retryCount);
        throw new Error('receiver down');
      },
      { retryLimit: 2, retryDelaySeconds: 1 },
    );
    const id = await jobs.send(name, { y: 2 });
    await until(async () => (await jobs.get(name, id))?.state === 'failed');
    expect(attempts).toEqual([0, 1, 2]);
    const dead = await db.query<{ data: unknown }>(`select data from pgboss.job where name = $1`, [
      `${name}.dead`,
    ]);
    expect(dead.map((d) => d.data)).toEqual([{ y: 2 }]);
  });

  it('retries with exponential backoff, each delay at most the queue maximum', async () => {
    await started;
    const name = queue('backoff');
    const at: number[] = [];
    await jobs.define(
      name,
      async () => {
        at.push(Date.now());
        throw new Error('still down');
      },
      { retryLimit: 3, retryDelaySeconds: 1 },
    );
    const id = await jobs.send(name, {});
    await until(async () => (await jobs.get(name, id))?.state === 'failed', 30_000);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    // pg-boss: retry n waits delay × 2^n × (1 + random) / 2 ... delay × 2^n, n from 1, checked by a 0.5 s poll
    expect(gaps).toHaveLength(3);
    gaps.forEach((gap, n) => {
      expect(gap).toBeGreaterThanOrEqual(2 ** n * 1000 - 100);
      expect(gap).toBeLessThan(2 ** (n + 1) * 1000 + 1200);
    });

    const capped = queue('capped');
    const cappedAt: number[] = [];
    await jobs.define(
      capped,
      async () => {
        cappedAt.push(Date.now());
        throw new Error('still down');
      },
      { retryLimit: 3, retryDelaySeconds: 1, retryDelayMaxSeconds: 1 },
    );
    const cappedId = await jobs.send(capped, {});
    await until(async () => (await jobs.get(capped, cappedId))?.state === 'failed', 30_000);
    for (const gap of cappedAt.slice(1).map((t, i) => t - cappedAt[i]!)) expect(gap).toBeLessThan(2200);
  });

  it('expires an attempt that runs too long: its signal is aborted and the job retried', async () => {
    await started;
    const name = queue('expiry');
    const attempts: Array<{ retry: number; aborted: boolean; ms: number }> = [];
    await jobs.define(
      name,
      async (_data, job) => {
        const begun = Date.now();
        if (job.retryCount === 0) {
          // hangs until the queue gives up on it
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 10_000);
            job.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
          });
        }
        attempts.push({ retry: job.retryCount, aborted: job.signal.aborted, ms: Date.now() - begun });
      },
      { expireInSeconds: 1, retryLimit: 1, retryDelaySeconds: 1 },
    );
    const id = await jobs.send(name, {});
    await until(async () => (await jobs.get(name, id))?.state === 'completed', 30_000);
    expect(attempts.map((a) => [a.retry, a.aborted])).toEqual([
      [0, true],
      [1, false],
    ]);
    expect(attempts[0]!.ms).toBeLessThan(5000); // the expiry, not the handler's own 10 s
  });

  it("keeps one group's jobs to its share of the workers: a hanging group does not hold the rest", async () => {
    // (perGroup counts over all instances; one instance here)
    await started;
    const name = queue('groups');
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let running = 0;
    let most = 0;
    const ran: Array<{ k: string; at: number }> = [];
    await jobs.define<{ k: string }>(
      name,
      async (data) => {
        if (data.k === 'slow') {
          running++;
          most = Math.max(most, running);
          await gate;
          running--;
        }
        ran.push({ k: data.k, at: Date.now() });
      },
      { concurrency: 4, perGroup: 2 },
    );
    for (let i = 0; i < 6; i++) await jobs.send(name, { k: 'slow' }, { group: 'endpoint-slow' });
    await until(() => running >= 2);
    const sent = Date.now();
    await jobs.send(name, { k: 'fast' }, { group: 'endpoint-fast' });
    await until(() => ran.some((r) => r.k === 'fast'));
    expect(ran.find((r) => r.k === 'fast')!.at - sent).toBeLessThan(1500);
    // two claims made at the same moment may both see one slot free: the bound is kept within one
    expect(running).toBeGreaterThanOrEqual(2);
    expect(running).toBeLessThanOrEqual(3);
    release();
    await until(() => ran.filter((r) => r.k === 'slow').length === 6);
    expect(most).toBeLessThanOrEqual(3);
  });

  it('drains a backlog at the speed of its handlers, not of the poll', async () => {
    await started;
    const name = queue('backlog');
    const ran: number[] = [];
    // queued by an instance that only serves HTTP (JOB_WORKERS=0), as before a restart
    const idle = await openJobs(db, { workers: 0, logger });
    await idle.define(name, async () => {
      throw new Error('an instance without workers runs nothing');
    });
    for (let i = 0; i < 100; i++) await idle.send(name, { i });
    await idle.stop();
    const begun = Date.now();
    await jobs.define<{ i: number }>(
      name,
      async (data) => {
        ran.push(data.i);
      },
      { concurrency: 2 },
    );
    await until(() => ran.length === 100);
    // two workers polling every 0.5 s would need 25 s
    expect(Date.now() - begun).toBeLessThan(10_000);
    expect(new Set(ran).size).toBe(100);
  });

  it('runs a job no earlier than its time, and not at all once cancelled', async () => {
    await started;
    const name = queue('later');
    const ran: Array<{ data: { k: string }; at: number }> = [];
    await jobs.define<{ k: string }>(name, async (data) => {
      ran.push({ data, at: Date.now() });
    });
    const at = new Date(Date.now() + 1500);
    await jobs.send(name, { k: 'later' }, { startAfter: at });
    const cancelled = await jobs.send(name, { k: 'cancelled' }, { startAfter: at });
    await jobs.cancel(name, cancelled);
    await until(() => ran.length === 1);
    expect(ran[0]!.data.k).toBe('later');
    expect(ran[0]!.at).toBeGreaterThanOrEqual(at.getTime() - 50);
    await new Promise((r) => setTimeout(r, 1200));
    expect(ran.map((r) => r.data.k)).toEqual(['later']);
    expect((await jobs.get(name, cancelled))?.state).toBe('cancelled');
  });

  it('runs due jobs by priority', async () => {
    await started;
    const name = queue('priority');
    const order: string[] = [];
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    // one at a time, held at the first job while the others are sent
    await jobs.define<{ k: string }>(
      name,
      async (data) => {
        if (data.k === 'first') await gate;
        order.push(data.k);
      },
      { concurrency: 1 },
    );
    await jobs.send(name, { k: 'first' });
    await until(async () => {
      const [row] = await db.query<{ n: number }>(
        `select count(*)::int as n from pgboss.job where name = $1 and state = 'active'`,
        [name],
      );
      return row?.n === 1;
    });
    await jobs.send(name, { k: 'low' }, { priority: 0 });
    await jobs.send(name, { k: 'high' }, { priority: 10 });
    release();
    await until(() => order.length === 3);
    expect(order).toEqual(['first', 'high', 'low']);
  });

  it('sends a job with the rows of a transaction, and not when it rolls back', async () => {
    await started;
    const name = queue('tx');
    const ran: string[] = [];
    await jobs.define<{ k: string }>(name, async (data) => {
      ran.push(data.k);
    });
    await db.transaction(async (tx) => {
      await jobs.send(name, { k: 'committed' }, { tx });
    });
    await expect(
      db.transaction(async (tx) => {
        await jobs.send(name, { k: 'rolled back' }, { tx });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    await until(() => ran.length === 1);
    await new Promise((r) => setTimeout(r, 800));
    expect(ran).toEqual(['committed']);
  });
});
