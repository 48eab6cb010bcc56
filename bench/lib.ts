// Start-up code the benchmarks share: servers each in a child process of their own (logging to a
// file in the run's work folder, all stopped at the end), waiting for them, their CPU time and
// memory from /proc, our model service started as `npm start` runs it, the pinned LiteLLM peer
// installed on first use, child roles of the script itself over IPC (an SMTP sink), and the
// result file.
import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SMTPServer } from 'smtp-server';
import type { Running, ServiceName } from '../src/services/server.ts';

export { freePort } from '../contract-tests/support/processes.ts';
import { freePort } from '../contract-tests/support/processes.ts';

export const NODE = process.execPath;
export const ROOT = resolve(import.meta.dirname, '..');

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
/** The machine's load averages (1, 5, 15 minutes): a figure taken under load says so. */
export const load = () => loadavg().map((l) => round(l)) as [number, number, number];

/** A run's work folder and the servers it started. */
export interface BenchRun {
  work: string;
  /** Starts a server in a child process, its output appended to `logName` in the work folder. */
  start(command: string, argv: string[], env: NodeJS.ProcessEnv, logName: string): ChildProcess;
  /** Stops every server started; removes the work folder unless BENCH_KEEP is set. */
  close(): Promise<void>;
}

export function benchRun(name: string): BenchRun {
  const work = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  const children: ChildProcess[] = [];
  return {
    work,
    start(command, argv, env, logName) {
      const out = openSync(join(work, logName), 'a');
      const child = spawn(command, argv, {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ['ignore', out, out],
      });
      children.push(child);
      return child;
    },
    async close() {
      await Promise.all(children.map(stop));
      // BENCH_KEEP=1 keeps the servers' logs (with BENCH_NODE_FLAGS=--trace-gc, the collections)
      if (process.env.BENCH_KEEP) console.log(`kept ${work}`);
      else rmSync(work, { recursive: true, force: true });
    },
  };
}

/** Waits until `url` answers 2xx; fails at once when the server exits. */
export async function waitFor(
  url: string,
  child: ChildProcess,
  options: { init?: RequestInit; seconds?: number } = {},
): Promise<void> {
  const seconds = options.seconds ?? 180;
  for (let i = 0; i < seconds * 4; i++) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited with ${child.exitCode}`);
    try {
      if ((await fetch(url, options.init)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`${url} did not answer within ${seconds} s`);
}

/** SIGTERM, then SIGKILL after 15 s. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(15_000)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** A process and its descendants (LiteLLM's uvicorn may fork). */
function tree(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      const kids = readFileSync(`/proc/${out[i]}/task/${out[i]}/children`, 'utf8').split(' ').filter(Boolean);
      out.push(...kids.map(Number));
    } catch {
      // gone
    }
  }
  return out;
}

/** CPU time (user + system, ms) of a process and its descendants, from /proc (Linux; USER_HZ 100). */
export function cpuMs(pid: number | undefined): number {
  let total = 0;
  for (const one of tree(pid)) {
    try {
      // the fields after the command name, which is in parentheses and may hold spaces
      const fields = readFileSync(`/proc/${one}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      // gone
    }
  }
  return total;
}

/**
 * CPU time (user + system, ms) of a process's main thread alone: the thread that serves HTTP in
 * ours, without its worker threads (the embedded database's, the image painter's) or V8's.
 */
export function mainThreadCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** RSS now and its peak (VmHWM), MiB, of a process and its descendants. */
export function rss(pid: number | undefined): { now: number; peak: number } {
  let now = 0;
  let peak = 0;
  for (const one of tree(pid)) {
    try {
      const status = readFileSync(`/proc/${one}/status`, 'utf8');
      now += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peak += Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return { now: round(now / 1024, 1), peak: round(peak / 1024, 1) };
}

export interface Ours {
  url: string;
  /** A secret of the `chat` scope alone, as an integrator would use. */
  key: string;
  child: ChildProcess;
}

/**
 * Our model service as `npm start` runs it (PGlite under a data folder of the run, or the
 * PostgreSQL of `DATABASE_URL` in `env`), with the per-key limits raised so that no request of
 * the benchmark is refused; `env` adds to or overrides that.
 */
export async function startOurs(
  run: BenchRun,
  options: { name: string; env?: NodeJS.ProcessEnv; nodeFlags?: string[] },
): Promise<Ours> {
  const port = await freePort();
  const admin = `sk_bench_${randomBytes(16).toString('hex')}`;
  const argv = [
    ...(options.nodeFlags ?? []),
    // as `npm start` runs it: a 64 MB young generation (see docs/benchmarks.md, garbage collection)
    '--max-semi-space-size=64',
    // further V8 flags for experiments, e.g. BENCH_NODE_FLAGS=--trace-gc
    ...(process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : []),
    'src/main.ts',
    'model',
  ];
  const env = {
    MODEL_API_PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: join(run.work, `data-${options.name}`),
    BOOTSTRAP_ADMIN_KEY: admin,
    MODEL_RATE_LIMIT_RPM: '1000000000',
    MODEL_RATE_LIMIT_TPM: '1000000000000',
    ...options.env,
  };
  const child = run.start(NODE, argv, env, `${options.name}.log`);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/readyz`, child);
  const created = await fetch(`${url}/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', scopes: ['chat'] }),
  });
  if (!created.ok) throw new Error(`POST /v1/keys: ${created.status} ${await created.text()}`);
  const { secret } = (await created.json()) as { secret: string };
  return { url, key: secret, child };
}

/**
 * The services inside this process, for the benchmarks that measure them from within: in memory,
 * on free loopback ports, silent, `key` the admin key; `env` is read as the service reads its own.
 * Imported on use, so that the scripts that only drive children do not load the services.
 */
export async function startInProcess(
  which: ServiceName[],
  key: string,
  env: Record<string, string> = {},
): Promise<Running> {
  const { loadConfig } = await import('../src/config.ts');
  const { startServices } = await import('../src/services/server.ts');
  const config = {
    ...loadConfig({ DATA_DIR: 'memory://', ...env }),
    host: '127.0.0.1',
    modelPort: 0,
    directoryPort: 0,
    logLevel: 'silent',
    dataDir: 'memory://',
    databaseUrl: undefined,
    bootstrapAdminKey: key,
  };
  return startServices(config, which, { drainMs: 1000 });
}

/** The LiteLLM release measured in docs/benchmarks.md. */
export const LITELLM_VERSION = '1.106.2';

/** The path of the pinned LiteLLM proxy, installed into .venv-bench/ on first use; undefined if it cannot be. */
export function litellm(): string | undefined {
  const bin = join(ROOT, '.venv-bench', 'bin', 'litellm');
  if (existsSync(bin)) return bin;
  console.log(`installing LiteLLM ${LITELLM_VERSION} into .venv-bench/ (first run only)`);
  try {
    execFileSync('python3', ['-m', 'venv', join(ROOT, '.venv-bench')], { stdio: 'inherit' });
    execFileSync(
      join(ROOT, '.venv-bench', 'bin', 'pip'),
      ['install', '--quiet', `litellm[proxy]==${LITELLM_VERSION}`],
      {
        stdio: 'inherit',
      },
    );
    return bin;
  } catch (error) {
    console.warn(`LiteLLM could not be installed (${(error as Error).message}); run without it`);
    return undefined;
  }
}

/** Writes a result as JSON into `dir`; returns the file's path. */
export function writeResult(dir: string, name: string, result: unknown): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}

// ---- roles: the script forks itself with `--role NAME`, so the other side of a measurement has
// a process (and a core) of its own ------------------------------------------------------------

/** This script again, in the role `role`, with `args` after it. */
export function forkRole(role: string, args: string[] = []): ChildProcess {
  return fork(process.argv[1]!, ['--role', role, ...args], { stdio: 'inherit' });
}

/** The next IPC message of a child. */
export const nextMessage = <T>(child: ChildProcess) =>
  new Promise<T>((resolve) => child.once('message', (m) => resolve(m as T)));

/** The SMTP sink role: accepts every message, sends `{ port }` once listening and `{ count }` when asked. */
export function smtpSink(): void {
  let count = 0;
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    disableReverseLookup: true,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.once('end', () => {
        count++;
        callback(null, 'queued');
      });
    },
  });
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ port: (server.server.address() as { port: number }).port });
  });
  process.on('message', () => process.send?.({ count }));
}
