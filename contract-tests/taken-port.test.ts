// Regression: with port 2525 taken by another program, `npm start` loaded the demo directory for
// minutes, then died with an EADDRINUSE stack printed twice, taking the model API down with it;
// and INBOUND_SMTP_PORT=off still listened (zod gave its default back). Now every port is tried
// first: a taken one stops the start before the data folder is even made, with one line naming
// the variable to change; `off` opens no listener.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { startServices } from '../src/services/server.ts';
import { freePort } from './support/processes.ts';

const scratch = mkdtempSync(join(tmpdir(), 'taken-port-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Another program's listener on a free port of 127.0.0.1. */
async function occupy(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, server };
}

/** Starts `node src/main.ts` as a person would and waits for it to end (at most 60 s). */
async function start(
  env: Record<string, string>,
): Promise<{ code: number | null; err: string; out: string; ms: number }> {
  const began = Date.now();
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: { ...process.env, HOST: '127.0.0.1', BOOTSTRAP_ADMIN_KEY: '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  return { code, err, out, ms: Date.now() - began };
}

const TAKEN = (variable: string, port: number, off = '') =>
  new RegExp(
    `^${variable} is taken: ${port} \\(another program listens there\\); set ${variable} to a free port${off}\\n$`,
  );

describe('a taken port stops the start at once, naming the variable', () => {
  it.each([
    ['MODEL_API_PORT', ''],
    ['DIRECTORY_API_PORT', ''],
    ['INBOUND_SMTP_PORT', ' or off'],
    ['METRICS_PORT', ' or off'],
  ])('%s', async (variable, off) => {
    const taken = await occupy();
    const dataDir = join(scratch, variable);
    const env: Record<string, string> = {
      MODEL_API_PORT: String(await freePort()),
      DIRECTORY_API_PORT: String(await freePort()),
      INBOUND_SMTP_PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      DATA_DIR: dataDir,
      [variable]: String(taken.port),
    };
    const run = await start(env);
    taken.server.close();
    expect(run.code, run.err).toBe(2);
    expect(run.err).toMatch(TAKEN(variable, taken.port, off)); // one line, no stack trace
    expect(run.out).toBe('');
    // before any long work: the data folder was not even made, let alone the demo loaded
    expect(existsSync(dataDir)).toBe(false);
  });

  it('in a cluster (WORKERS=2) too, before a worker is forked', async () => {
    const taken = await occupy();
    const run = await start({
      WORKERS: '2',
      // never reached: the primary binds its ports before any worker connects anywhere
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      REDIS_URL: 'redis://127.0.0.1:1',
      MODEL_API_PORT: String(await freePort()),
      DIRECTORY_API_PORT: String(await freePort()),
      INBOUND_SMTP_PORT: String(taken.port),
    });
    taken.server.close();
    expect(run.code, run.err).toBe(2);
    expect(run.err).toMatch(TAKEN('INBOUND_SMTP_PORT', taken.port, ' or off'));
  });

  it('one port for both services names the second and the first', async () => {
    const port = await freePort();
    const run = await start({
      MODEL_API_PORT: String(port),
      DIRECTORY_API_PORT: String(port),
      INBOUND_SMTP_PORT: 'off',
      DATA_DIR: join(scratch, 'same'),
    });
    expect(run.code, run.err).toBe(2);
    expect(run.err).toBe(
      `DIRECTORY_API_PORT is taken: ${port} (MODEL_API_PORT is the same); set DIRECTORY_API_PORT to another port\n`,
    );
  });
});

describe('INBOUND_SMTP_PORT=off', () => {
  it('starts the directory with no SMTP listener', async () => {
    const listeners = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
    const before = listeners();
    const config = {
      ...loadConfig({ DATA_DIR: 'memory://', INBOUND_SMTP_PORT: 'off', DEMO_LISTINGS: '0' }),
      host: '127.0.0.1',
      modelPort: 0,
      directoryPort: 0,
      logLevel: 'silent',
      dataDir: 'memory://',
      bootstrapAdminKey: 'sk_test_taken_port_admin_0123456789',
    };
    const running = await startServices(config, ['model', 'directory'], { drainMs: 100 });
    try {
      expect(running.smtpPort).toBeUndefined();
      expect(listeners() - before).toBe(2); // the two HTTP services, nothing else
    } finally {
      await running.close();
    }
  }, 180_000);
});
