// The job queue across instances: a job kept over a stop (PGlite on disk), and two instances
// sharing one PostgreSQL (each job once, a long job not claimed twice, one cron send per
// occurrence). Nothing here is timed against the machine's speed, so it runs beside other files;
// the timed suites are in jobs.test.ts, which runs alone (vitest.config.ts ALONE).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until as waitFor } from '../../contract-tests/support/client.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../../contract-tests/support/server.ts';
import { openDb } from './db.ts';
import { openJobs } from './jobs.ts';
import { createLogger } from './logger.ts';

const logger = createLogger('silent', 'jobs-instances-test');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

let n = 0;
const queue = (what: string) => `test.${what}.${process.pid}.${Date.now()}.${n++}`;

/** Polls every 50 ms (the timed suites assert on wake-ups within 400 ms). */
const until = (check: () => boolean | Promise<boolean>, ms = 20_000) => waitFor('the jobs', check, ms, 50);

describe('jobs survive a stop', () => {
  it('a job pending when its instance stops runs after the restart (PGlite on disk)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jobs-'));
    dirs.push(dir);
    const name = queue('restart');
    let db = await openDb({ dataDir: dir });
    let jobs = await openJobs(db, { workers: 0, logger }); // serves HTTP only: sends, never runs
    expect(jobs.working).toBe(false);
    await jobs.define(name, async () => {
      throw new Error('an instance without workers runs nothing');
    });
    await jobs.send(name, { k: 'kept' });
    await jobs.stop();
    await db.close();

    db = await openDb({ dataDir: dir });
    jobs = await openJobs(db, { workers: 2, logger, pollingIntervalSeconds: 0.5 });
    const ran: unknown[] = [];
    await jobs.define(name, async (data) => {
      ran.push(data);
    });
    await until(() => ran.length === 1);
    expect(ran).toEqual([{ k: 'kept' }]);
    await jobs.stop();
    await db.close();
  });
});

describe.runIf(await hasPostgres())('jobs shared by two instances on one PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('two instances on one PostgreSQL run each of 200 jobs once', async () => {
    const name = queue('shared');
    const dbs = [
      await openDb({ databaseUrl: database.url, dataDir: 'memory://' }),
      await openDb({ databaseUrl: database.url, dataDir: 'memory://' }),
    ];
    const runs = new Map<number, string[]>();
    const instances = await Promise.all(
      dbs.map(async (db, i) => {
        const jobs = await openJobs(db, { workers: 4, logger, pollingIntervalSeconds: 0.5 });
        await jobs.define<{ i: number }>(
          name,
          async (data) => {
            runs.set(data.i, [...(runs.get(data.i) ?? []), `instance ${i}`]);
            await new Promise((r) => setTimeout(r, 5));
          },
          { concurrency: 4 },
        );
        return jobs;
      }),
    );
    for (let i = 0; i < 200; i++) await instances[i % 2]!.send(name, { i });
    await until(() => runs.size === 200, 60_000);
    await new Promise((r) => setTimeout(r, 500));
    expect([...runs.values()].filter((r) => r.length !== 1)).toEqual([]);
    const by = [...runs.values()].flat();
    expect(by.filter((w) => w === 'instance 0').length).toBeGreaterThan(0);
    expect(by.filter((w) => w === 'instance 1').length).toBeGreaterThan(0);
    for (const jobs of instances) await jobs.stop();
    for (const db of dbs) await db.close();
  });

  it('a job that outlasts the heartbeat is not claimed by the other instance while it runs', async () => {
    const name = queue('long');
    const dbs = [
      await openDb({ databaseUrl: database.url, dataDir: 'memory://' }),
      await openDb({ databaseUrl: database.url, dataDir: 'memory://' }),
    ];
    const runs: string[] = [];
    let running = 0;
    let most = 0;
    const instances = await Promise.all(
      dbs.map(async (db, i) => {
        const jobs = await openJobs(db, { workers: 2, logger, pollingIntervalSeconds: 0.5 });
        await jobs.define(
          name,
          async () => {
            runs.push(`instance ${i}`);
            running++;
            most = Math.max(most, running);
            // longer than a heartbeat (10 s) and the supervisor's look (10 s) together
            await new Promise((r) => setTimeout(r, 24_000));
            running--;
          },
          { concurrency: 2, expireInSeconds: 120 },
        );
        return jobs;
      }),
    );
    const id = await instances[0]!.send(name, {});
    await until(async () => (await instances[1]!.get(name, id))?.state === 'completed', 60_000);
    expect(runs).toHaveLength(1);
    expect(most).toBe(1);
    for (const jobs of instances) await jobs.stop();
    for (const db of dbs) await db.close();
  }, 90_000);

  it('two instances with the same cron schedule send one job per occurrence', async () => {
    const name = queue('cron');
    const dbs = [
      await openDb({ databaseUrl: database.url, dataDir: 'memory://' }),
      await openDb({ databaseUrl: database.url, dataDir: 'memory://' }),
    ];
    const runs: Array<{ instance: number; at: number }> = [];
    const instances = await Promise.all(
      dbs.map(async (db, i) => {
        const jobs = await openJobs(db, { workers: 1, logger, pollingIntervalSeconds: 0.5 });
        await jobs.define(name, async () => {
          runs.push({ instance: i, at: Date.now() });
        });
        await jobs.schedule(name, '* * * * *'); // every minute, in both instances
        return jobs;
      }),
    );
    // an occurrence (this minute's or the next), found by the cron pass (every 5 s) of either instance
    await until(() => runs.length > 0, 80_000);
    await new Promise((r) => setTimeout(r, 15_000)); // room for the other instance to send it again
    const perMinute = new Map<number, number>();
    for (const run of runs) {
      const minute = Math.floor(run.at / 60_000);
      perMinute.set(minute, (perMinute.get(minute) ?? 0) + 1);
    }
    expect([...perMinute.values()].every((n) => n === 1)).toBe(true);
    await instances[0]!.unschedule(name);
    for (const jobs of instances) await jobs.stop();
    for (const db of dbs) await db.close();
  }, 120_000);
});
