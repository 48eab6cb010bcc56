// WORKERS (src/cluster.ts): one instance as several processes on one port, each a full instance
// of the services; the primary hands connections out in strict turn. Started the way an
// operator starts it, on PostgreSQL and Redis (what several processes need to agree).
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountStore } from '../src/accounts/store.ts';
import { type Db } from '../src/platform/db.ts';
import { openStorage } from '../src/storage.ts';
import { bearer } from './support/envelope.ts';
import { freePort } from './support/processes.ts';
import { sendSmtp } from './support/smtp.ts';
import { type Instance, redisAvailable, startInstance, waitReady } from './support/instances.ts';
import { createTestDatabase, hasPostgres, type TestDatabase, TEST_REDIS_URL } from './support/server.ts';
import { until } from './support/client.ts';

const RUNS = (await hasPostgres()) && (await redisAvailable());
const DAILY = 12;

/** The worker processes of a primary. */
function workersOf(primary: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(primary)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((pid) => pid > 0);
  } catch {
    return []; // ps exits 1 when there is none
  }
}

/** A request on a connection of its own (the primary hands each new connection to the next worker). */
async function fresh(url: string, key?: string): Promise<Response> {
  return fetch(url, { headers: { connection: 'close', ...(key ? bearer(key) : {}) } });
}

/** Starts `node src/main.ts` with `env` and waits for it to exit: its code and standard error. */
async function refusal(env: Record<string, string>): Promise<{ code: number | null; err: string }> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, err };
}

describe('WORKERS without what several processes need', () => {
  it('refuses to start without DATABASE_URL and REDIS_URL, and says why', async () => {
    const { code, err } = await refusal({
      WORKERS: '2',
      DATABASE_URL: '',
      REDIS_URL: '',
      DATA_DIR: 'memory://',
    });
    expect(code).toBe(2);
    expect(err).toContain('WORKERS > 1 needs DATABASE_URL and REDIS_URL');
  });

  it('refuses a count that is not a whole number from 1 to 64', async () => {
    const { code, err } = await refusal({ WORKERS: 'two' });
    expect(code).toBe(2);
    expect(err).toContain('WORKERS must be a whole number from 1 to 64, or auto');
  });
});

describe.runIf(RUNS)('WORKERS=2 on PostgreSQL and Redis', () => {
  const adminKey = `sk_test_admin_${randomBytes(16).toString('hex')}`;
  let database: TestDatabase;
  let instance: Instance;
  let db: Db;

  let smtpPort: number;

  beforeAll(async () => {
    smtpPort = await freePort();
    database = await createTestDatabase();
    instance = await startInstance({
      WORKERS: '2',
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      BOOTSTRAP_ADMIN_KEY: adminKey,
      DIRECTORY_DAILY_QUOTA: String(DAILY),
      INBOUND_SMTP_PORT: String(smtpPort),
    });
    await waitReady(instance.directory);
    await waitReady(instance.model);
    db = await openStorage({ databaseUrl: database.url, dataDir: 'memory://' });
  }, 120_000);
  afterAll(async () => {
    await instance?.stop();
    await db?.close();
    await database?.drop();
  });

  it('runs two worker processes behind one port, ready only once both are', async () => {
    expect(workersOf(instance.pid)).toHaveLength(2);
    // every worker says ready, whichever takes the connection
    for (let i = 0; i < 4; i++) {
      const res = await fresh(`${instance.directory}/readyz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ready' });
    }
  });

  it("takes one key's requests from the same buckets, whichever worker serves them", async () => {
    // A day is a UTC day: a run that would straddle midnight waits for it first.
    const toMidnight = 86_400_000 - (Date.now() % 86_400_000);
    if (toMidnight < 20_000) await new Promise((r) => setTimeout(r, toMidnight + 500));
    const store = new AccountStore(db);
    const { accountId } = await store.createAccount('unlimited search', 'search_unlimited');
    const key = await store.createKey(accountId, { name: 'workers', scopes: ['search'] });
    // connections go to the workers in turn, so these alternate; with a limiter per process
    // each would allow DAILY and the first refusal would come after 2 * DAILY
    const statuses: number[] = [];
    for (let i = 0; i < DAILY + 2; i++) {
      const res = await fresh(`${instance.directory}/v1/search?q=plumber&limit=1`, key.secret);
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses.join(' ')).toBe([...Array<number>(DAILY).fill(200), 429, 429].join(' '));
  });

  it('hands inbound SMTP connections to the workers, which look reply domains up in the shared database', async () => {
    await db.query(
      `insert into sending_domains (id, account_id, project_id, domain, dkim_selector, dkim_private_key_sealed,
         dns_records, status, verified_at, created)
       values ('sd_01JDS3C4DWA7N36096Q14DR9GP', 'acct_x', 'proj_x', 'workers.test', 'eurus-abc', 'v1.x',
         '[]', 'verified', 1, 1)`,
    );
    // one connection each, so the primary hands them to the workers in turn
    for (let i = 0; i < 4; i++) {
      const refused = await sendSmtp(smtpPort, {
        from: 'a@sender.test',
        to: 'r-1@reply.unknown.test',
        subject: 'hi',
        text: 'hi',
      }).then(
        () => undefined,
        (err: { responseCode?: number; command?: string }) => err,
      );
      expect(refused).toMatchObject({ responseCode: 550, command: expect.stringMatching(/RCPT/) as unknown });
      // a verified domain's reply host passes RCPT TO in every worker (what follows is the handler's)
      const accepted = await sendSmtp(smtpPort, {
        from: 'a@sender.test',
        to: 'r-1@reply.workers.test',
        subject: 'hi',
        text: 'hi',
      }).then(
        () => undefined,
        (err: { command?: string }) => err,
      );
      expect(accepted?.command ?? 'DATA').not.toMatch(/RCPT/);
    }
  });

  it('replaces a worker that dies, and serves throughout', async () => {
    const before = workersOf(instance.pid);
    process.kill(before[0]!, 'SIGKILL');
    // A connection handed over in the instant a worker dies is lost with it, as with any crash
    // of a process; once the primary has seen the death, the survivor takes every connection.
    await until('the death seen', () => (workersOf(instance.pid).includes(before[0]!) ? undefined : true));
    for (let i = 0; i < 6; i++) {
      const res = await fresh(`${instance.model}/healthz`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const after = await until('a replacement worker', () => {
      const now = workersOf(instance.pid);
      return now.length === 2 && !now.includes(before[0]!) ? now : undefined;
    });
    expect(after).toContain(before[1]);
    await waitReady(instance.directory);
    const res = await fresh(`${instance.model}/v1/models`, adminKey);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  }, 90_000);

  it('stops every worker on SIGTERM and exits 0', async () => {
    const workers = workersOf(instance.pid);
    expect(workers).toHaveLength(2);
    process.kill(instance.pid, 'SIGTERM');
    expect(await instance.exited).toBe(0);
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
  }, 60_000);
});
