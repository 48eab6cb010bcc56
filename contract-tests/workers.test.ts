// WORKERS (src/cluster.ts): several instances of the services in one process on one port (the
// primary thread and worker threads), over one search index in shared memory; the primary hands
// connections out in strict turn. Started the way an operator starts it, on PostgreSQL and Redis
// (what several instances need to agree).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountStore } from '../src/accounts/store.ts';
import { type Db } from '../src/platform/db.ts';
import { openStorage } from '../src/storage.ts';
import { demoListing } from '../src/directory/demo.ts';
import { insertListings } from '../src/directory/store.ts';
import { bearer } from './support/envelope.ts';
import { freePort, stop, waitForHttp } from './support/processes.ts';
import { sendSmtp } from './support/smtp.ts';
import { type Instance, redisAvailable, startInstance, waitReady } from './support/instances.ts';
import { createTestDatabase, hasPostgres, type TestDatabase, TEST_REDIS_URL } from './support/server.ts';
import { until } from './support/client.ts';

const RUNS = (await hasPostgres()) && (await redisAvailable());
const DAILY = 12;

/** The worker threads of a primary, by their names (`eurus-worker-N`). */
function workerThreads(primary: number): string[] {
  return readdirSync(`/proc/${primary}/task`)
    .map((task) => {
      try {
        return readFileSync(`/proc/${primary}/task/${task}/comm`, 'utf8').trim();
      } catch {
        return ''; // a thread that ended meanwhile
      }
    })
    .filter((name) => name.startsWith('eurus-worker-'))
    .sort();
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
    // two instances fill and index the demo directory beside other files: room for a busy machine
    await waitReady(instance.directory, 180_000);
    await waitReady(instance.model, 60_000);
    db = await openStorage({ databaseUrl: database.url, dataDir: 'memory://' });
  }, 300_000);
  afterAll(async () => {
    await instance?.stop();
    await db?.close();
    await database?.drop();
  });

  it('runs two instances behind one port, the primary and a worker thread, ready only once both are', async () => {
    expect(workerThreads(instance.pid)).toEqual(['eurus-worker-1']);
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

  it('answers every search as one instance does, from either thread, and after listings are added', async () => {
    const one = await startInstance({
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      BOOTSTRAP_ADMIN_KEY: adminKey,
    });
    try {
      await waitReady(one.directory);
      const queries = [
        'q=plumber&mode=keyword',
        'q=plumber&mode=hybrid',
        'q=my%20kitchen%20pipe%20is%20leaking&mode=semantic',
        'q=hair%20salon&mode=hybrid&country=DE',
        'q=Zahnarzt&near=52.52%2C13.405&radius_km=300',
        'q=restaurant&mode=keyword&claimed=true&limit=5',
      ];
      // a page as text, its own origin (photo URLs) written out of it
      const page = async (base: string, query: string) =>
        (await (await fresh(`${base}/v1/search?${query}`, adminKey)).text()).replaceAll(base, 'ORIGIN');
      const same = async () => {
        for (const query of queries) {
          const expected = await page(one.directory, query);
          expect(JSON.parse(expected), query).toHaveProperty('data');
          // two fresh connections: the primary's instance and the worker thread's
          for (let i = 0; i < 2; i++) expect(await page(instance.directory, query), query).toBe(expected);
        }
      };
      await same();
      const added = Array.from({ length: 40 }, (_, i) => demoListing('workers-after', i));
      await db.transaction((tx) => insertListings(tx, added));
      await same();
      // the listings added are found by both threads (the index caught up once, by its owner)
      const name = encodeURIComponent(added[3]!.name);
      for (let i = 0; i < 2; i++) {
        const page = (await (
          await fresh(`${instance.directory}/v1/search?q=${name}&mode=keyword&limit=50`, adminKey)
        ).json()) as { data: { listing: { id: string } }[] };
        expect(page.data.map((h) => h.listing.id)).toContain(added[3]!.id);
      }
    } finally {
      await one.stop();
    }
  }, 120_000);

  it('stops every instance on SIGTERM and exits 0', async () => {
    expect(workerThreads(instance.pid)).toHaveLength(1);
    process.kill(instance.pid, 'SIGTERM');
    expect(await instance.exited).toBe(0);
  }, 60_000);
});

describe('the cluster around a service whose thread can die', () => {
  let port: number;
  let child: ReturnType<typeof spawn>;
  let output = '';

  beforeAll(async () => {
    port = await freePort();
    child = spawn(process.execPath, ['contract-tests/support/cluster-fixture.ts', String(port), '3'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    await waitForHttp(`http://127.0.0.1:${port}/who`, child);
  }, 60_000);
  afterAll(async () => {
    await stop(child);
  });

  const who = async () =>
    ((await (await fresh(`http://127.0.0.1:${port}/who`)).json()) as { slot: number }).slot;

  it('hands connections to the instances in strict turn', async () => {
    await until('all three up', async () => {
      const slots = new Set([await who(), await who(), await who()]);
      return slots.size === 3 ? true : undefined;
    });
    const turn = [await who(), await who(), await who(), await who(), await who(), await who()];
    expect(turn.slice(3)).toEqual(turn.slice(0, 3));
    expect(new Set(turn.slice(0, 3))).toEqual(new Set([0, 1, 2]));
  });

  it('lets a thread ask the primary', async () => {
    const answers = await Promise.all(
      [0, 1, 2].map(async () => (await fresh(`http://127.0.0.1:${port}/ask`)).text()),
    );
    expect(answers.sort()).toEqual(['asked from 0', 'asked from 1', 'asked from 2']);
  });

  it('replaces a worker thread that dies, and serves throughout', async () => {
    // connections go round the three: one of the next three reaches slot 1
    await until('slot 1 told to die', async () => {
      const res = await fresh(`http://127.0.0.1:${port}/die?slot=1`);
      return (await res.text()) === 'dying' ? true : undefined;
    });
    await until('the death seen', () => (output.includes('a worker died') ? true : undefined));
    for (let i = 0; i < 6; i++) expect([0, 1, 2]).toContain(await who());
    await until('a replacement in slot 1', async () => {
      const slots = new Set([await who(), await who(), await who()]);
      return slots.size === 3 ? true : undefined;
    });
    expect(output).toContain('dies as asked');
  }, 60_000);
});
