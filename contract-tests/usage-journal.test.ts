// No billed call is lost when the process dies: chat calls answer once their usage record is in
// the journal (src/platform/metering.ts), not in the database. The model API is started as an
// operator starts it, loaded with chat calls from many clients, and killed with SIGKILL in the
// middle; the journal then holds records the database has not got. Once it starts again, every
// call a client got a 200 for is in usage_records, on each storage.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStorage } from '../src/storage.ts';
import { send } from './support/client.ts';
import { freePort, stop, waitForHttp } from './support/processes.ts';
import { createTestDatabase, storages, type TestDatabase } from './support/server.ts';

const CLIENTS = 12;
const LOAD_MS = 2500;

function start(env: Record<string, string>, port: number): ChildProcess {
  return spawn(process.execPath, ['src/main.ts', 'model'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      MODEL_API_PORT: String(port),
      LOG_LEVEL: 'warn',
      MODEL_RATE_LIMIT_RPM: '1000000000',
      MODEL_RATE_LIMIT_TPM: '1000000000000',
      MODEL_ENGINES: '',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Every segment file under the journal directory (one folder per database). */
function segments(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'));
}

const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const db of databases) await db.drop();
});

describe.each(await storages())('the usage journal under kill -9 (%s)', (storage) => {
  it('bills every call that was answered', { timeout: 180_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'journal-kill-'));
    const journal = join(dataDir, 'usage-journal');
    const admin = `sk_admin_${randomBytes(12).toString('hex')}`;
    let databaseUrl = '';
    if (storage === 'postgres') {
      const db = await createTestDatabase();
      databases.push(db);
      databaseUrl = db.url;
    }
    const env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, BOOTSTRAP_ADMIN_KEY: admin };
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    let child = start(env, port);
    try {
      await waitForHttp(`${url}/readyz`, child, 120_000);
      const created = await send(url, admin, 'POST', '/v1/keys', { name: 'load', scopes: ['chat'] });
      expect(created.status).toBe(201);
      const secret = created.body.secret as string;

      let sent = 0;
      let answered = 0;
      let killed = false;
      const call = async () => {
        sent++;
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'prince',
            messages: [{ role: 'user', content: 'hi' }],
            max_tokens: 8,
          }),
        });
        await res.arrayBuffer();
        if (res.status === 200) answered++;
      };
      const loops = Array.from({ length: CLIENTS }, async () => {
        while (!killed) await call().catch(() => undefined); // the kill fails the calls in flight
      });
      await new Promise((r) => setTimeout(r, LOAD_MS));
      // listened for before the kill: the exit may come while the clients' calls fail
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      killed = true;
      await Promise.all(loops);
      await exited;
      expect(answered).toBeGreaterThan(50);
      // What the database had not got yet when the process died is in the journal's segments;
      // on a quiet machine the database may have caught up by the kill (none left), so their
      // number is not asserted here: src/platform/metering.test.ts replays segments directly.

      child = start(env, port);
      await waitForHttp(`${url}/readyz`, child, 120_000); // the journal is replayed before ready
      expect(segments(journal)).toEqual([]);
      await stop(child);

      const db = await openStorage({ databaseUrl: databaseUrl || undefined, dataDir });
      try {
        const [row] = await db.query<{ n: number }>(
          `select count(*)::int as n from usage_records where endpoint = '/v1/chat/completions' and status = 200`,
        );
        // every answered call is billed; a call whose answer the kill cut off may be billed too
        expect(row?.n).toBeGreaterThanOrEqual(answered);
        expect(row?.n).toBeLessThanOrEqual(sent);
      } finally {
        await db.close();
      }
    } finally {
      await stop(child);
    }
  });
});
