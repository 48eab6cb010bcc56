// The directory service as the benchmarks start it: a child process (`node src/main.ts
// directory`) on a free port with a fresh admin key, and its RSS summed over its processes.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const NODE = process.execPath;

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  return typeof address === 'object' && address ? address.port : 0;
}

/** RSS and its peak of the service: its process and, with workers, theirs added up. */
export function rssMb(pid: number): { rss: number; hwm: number } {
  let rss = 0;
  let hwm = 0;
  const children = (() => {
    try {
      return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  })();
  for (const one of [pid, ...children]) {
    const status = readFileSync(`/proc/${one}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    rss += kb('VmRSS');
    hwm += kb('VmHWM');
  }
  return { rss: Math.round(rss / 1024), hwm: Math.round(hwm / 1024) };
}

export interface Service {
  url: string;
  key: string;
  pid: number;
  ready_s: number;
  stop(): Promise<void>;
}

/** Starts the directory with `env` added and waits until /readyz answers 200 (the index built). */
export async function startService(env: Record<string, string>): Promise<Service> {
  const port = await freePort();
  const key = `sk_bench_${randomBytes(16).toString('hex')}`;
  const started = performance.now();
  const flags = process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : []; // e.g. --trace-gc
  const child = spawn(NODE, ['--max-semi-space-size=64', ...flags, 'src/main.ts', 'directory'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...env,
      HOST: '127.0.0.1',
      DIRECTORY_API_PORT: String(port),
      INBOUND_SMTP_PORT: 'off',
      BOOTSTRAP_ADMIN_KEY: key,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    key,
    pid: child.pid ?? 0,
    ready_s: Math.round((performance.now() - started) / 100) / 10,
    async stop() {
      await new Promise((r) => setTimeout(r, 2000)); // the requests a load generator left in flight
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}
