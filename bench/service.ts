// The directory service as the benchmarks start it: a child process (`node src/main.ts
// directory`) on a free port with a fresh admin key, and its RSS summed over its processes. The
// start-up parts are bench/lib.ts's.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { freePort, NODE, ROOT, rss, waitFor } from './lib.ts';

export { NODE, ROOT } from './lib.ts';

/** RSS and its peak of the service (MiB): its process and, with workers, theirs added up. */
export function rssMb(pid: number): { rss: number; hwm: number } {
  const { now, peak } = rss(pid);
  return { rss: Math.round(now), hwm: Math.round(peak) };
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
  await waitFor(`${url}/readyz`, child, { seconds: 24 * 3600 }); // a large index takes its time
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
