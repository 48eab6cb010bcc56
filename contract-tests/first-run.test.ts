// Regression: `npm ci && npm start` without BOOTSTRAP_ADMIN_KEY left a newcomer with no key and
// no way to get one. The first start of an empty database now prints an admin key once, in plain
// words; it works, it is never printed again, and of instances starting together one prints it.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, outputOf, printed, stop, waitForHttp } from './support/processes.ts';
import { createTestDatabase, storages } from './support/server.ts';

const SECRET = /^\s+(sk_[A-Za-z0-9]{48})$/m;

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  /** Settles once the child has exited and its output has been read to the end. */
  closed: Promise<void>;
}

async function startModel(env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, ['src/main.ts', 'model'], {
    env: {
      ...process.env,
      BOOTSTRAP_ADMIN_KEY: '',
      MODEL_API_PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = outputOf(child);
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/healthz`, child, 90_000);
  return { child, url, output, closed };
}

/** The admin key a start printed. */
const printedKey = async (output: () => string) => (await printed('the admin key', output, SECRET))[1]!;

const models = (url: string, secret: string) =>
  fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });

for (const storage of await storages()) {
  describe(`the first start of an empty database prints an admin key once (${storage})`, () => {
    const cleanups: Array<() => Promise<void> | void> = [];
    afterAll(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    async function database(): Promise<Record<string, string>> {
      if (storage === 'postgres') {
        const db = await createTestDatabase();
        cleanups.push(() => db.drop());
        return { DATABASE_URL: db.url };
      }
      const dir = mkdtempSync(join(tmpdir(), 'first-run-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      return { DATA_DIR: dir };
    }

    it('prints a working key once: on the first start, not the second', async () => {
      const env = await database();
      const first = await startModel(env);
      cleanups.push(() => stop(first.child));
      const secret = await printedKey(first.output);
      expect(first.output()).toContain('shown this once');
      // The console's sign-up address beside it (issue 20, point 8).
      expect(first.output()).toMatch(/sign up .* in the console: http:\/\/\S+\/console\/signup/);
      expect(first.output()).not.toMatch(/\{"level"[^\n]*sk_/); // not in a JSON log line
      expect((await models(first.url, secret)).status, first.output()).toBe(200);
      await stop(first.child);

      const second = await startModel(env);
      cleanups.push(() => stop(second.child));
      expect(second.output()).not.toMatch(/sk_[A-Za-z0-9]{48}/);
      expect((await models(second.url, secret)).status, second.output()).toBe(200);
    }, 180_000); // two starts, one after the other

    if (storage === 'postgres') {
      it('is made and printed by exactly one of two instances starting at once', async () => {
        const env = await database();
        const [a, b] = await Promise.all([startModel(env), startModel(env)]);
        cleanups.push(
          () => stop(a.child),
          () => stop(b.child),
        );
        // The maker prints the key just after it serves, so its /healthz answer can come first.
        const both = { output: () => `${a.output()}\n${b.output()}` };
        const secret = await printedKey(both.output);
        for (const s of [a, b]) expect((await models(s.url, secret)).status, s.output()).toBe(200);
        // Read both outputs whole, once they have exited, to count who printed it and how often.
        await Promise.all([a, b].map((s) => stop(s.child).then(() => s.closed)));
        const shown = [a, b].map((s) => [...s.output().matchAll(new RegExp(SECRET, 'gm'))].length);
        expect(shown.sort(), both.output()).toEqual([0, 1]);
      });
    }

    it('prints nothing when BOOTSTRAP_ADMIN_KEY is set', async () => {
      const env = await database();
      const started = await startModel({
        ...env,
        BOOTSTRAP_ADMIN_KEY: 'sk_test_first_run_bootstrap_0123456789',
      });
      cleanups.push(() => stop(started.child));
      expect(started.output()).not.toMatch(/sk_[A-Za-z0-9]{48}/);
    });
  });
}

// Regression (issue 27): the first start showed a search to try while the directory was still
// loading for minutes, and told the person who had just been given a key to sign up to get one.
// Now the first block lists what is ready (the model API); the directory says when it is ready,
// with its search, and that search works with the key printed.
describe('the first start of both services says what is ready, when it is', () => {
  const dir = mkdtempSync(join(tmpdir(), 'first-run-both-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the key and the model API, then the directory once it is ready', async () => {
    const [model, directory] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, ['src/main.ts'], {
      env: {
        ...process.env,
        BOOTSTRAP_ADMIN_KEY: '',
        DATA_DIR: join(dir, 'data'),
        MODEL_API_PORT: String(model),
        DIRECTORY_API_PORT: String(directory),
        INBOUND_SMTP_PORT: 'off',
        HOST: '127.0.0.1',
        DEMO_LISTINGS: '3000',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let readyWhenSaid: number | undefined;
    const said = new Promise<void>((resolve) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        if (readyWhenSaid === undefined && /The directory API is ready at/.test(output)) {
          readyWhenSaid = 0;
          // what the line says is so when it is printed
          void fetch(`http://127.0.0.1:${directory}/readyz`).then((res) => {
            readyWhenSaid = res.status;
            resolve();
          });
        }
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
    });
    try {
      await said;
      expect(readyWhenSaid, output).toBe(200);
      const [first = '', second = ''] = output.split(/(?=\n {2}The directory API is ready at)/);
      const secret = SECRET.exec(first)?.[1] ?? '';
      expect(first).toMatch(/The model API is ready at http:\/\/127\.0\.0\.1:\d+:/);
      expect(first).toMatch(/The directory API is loading its 3,000 demo listings/);
      expect(first).not.toContain('/v1/search'); // nothing that is not ready yet
      expect(output).not.toMatch(/to get a key/);
      expect(second).toMatch(
        /The directory API is ready at http:\/\/127\.0\.0\.1:\d+ \(3,000 listings, [\d.]+ s after the start\)/,
      );
      const search = /curl "([^"]+)"/.exec(second)?.[1] ?? '';
      expect(search).toContain('/v1/search?q=restaurant');
      const res = await fetch(search, { headers: { authorization: `Bearer ${secret}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    } finally {
      await stop(child);
    }
  }, 300_000);
});
