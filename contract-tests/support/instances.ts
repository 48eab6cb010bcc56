// Service instances as separate processes, started the way an operator starts them
// (`node src/main.ts` with environment variables), for suites that need several instances
// sharing one PostgreSQL database and one Redis.
import { type ChildProcess, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { TEST_DEMO_LISTINGS } from './demo.ts';
import { freePort, stop, waitForHttp } from './processes.ts';
import { type ServiceName, TEST_REDIS_URL } from './server.ts';

export interface Instance {
  /** The model API's URL (nothing answers there when the instance runs the directory alone). */
  model: string;
  directory: string;
  /** The process started (with WORKERS > 1, the primary). */
  pid: number;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** What the process wrote, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `node src/main.ts` with both services, or only `service` (`node src/main.ts directory`). */
export async function startInstance(env: Record<string, string>, service?: ServiceName): Promise<Instance> {
  const ports = { model: await freePort(), directory: await freePort() };
  const chunks: string[] = [];
  const child: ChildProcess = spawn(process.execPath, ['src/main.ts', ...(service ? [service] : [])], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      MODEL_API_PORT: String(ports.model),
      DIRECTORY_API_PORT: String(ports.directory),
      INBOUND_SMTP_PORT: '0',
      DATA_DIR: 'memory://',
      LOG_LEVEL: 'warn',
      DEMO_LISTINGS: TEST_DEMO_LISTINGS,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => chunks.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => chunks.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const instance: Instance = {
    pid: child.pid!,
    exited,
    model: `http://127.0.0.1:${ports.model}`,
    directory: `http://127.0.0.1:${ports.directory}`,
    output: () => chunks.join(''),
    stop: () => stop(child),
  };
  try {
    for (const name of service ? [service] : (['model', 'directory'] as const))
      await waitForHttp(`${instance[name]}/healthz`, child);
  } catch (err) {
    await instance.stop();
    throw new Error(`${String(err)}\n${instance.output()}`);
  }
  return instance;
}

/** Polls /readyz until it answers 200. */
export async function waitReady(base: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const res = await fetch(`${base}/readyz`).catch(() => undefined);
    if (res?.status === 200) return;
    await res?.arrayBuffer();
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${base}/readyz did not answer 200 within ${timeoutMs} ms`);
}

let redisReachable: boolean | undefined;

/** Whether the test Redis answers; in CI it must (scripts/test-deps.sh starts it). */
export async function redisAvailable(): Promise<boolean> {
  if (redisReachable !== undefined) return redisReachable;
  const redis = new Redis(TEST_REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
  });
  try {
    await redis.connect();
    await redis.ping();
    redisReachable = true;
  } catch (err) {
    if (process.env.CI) throw new Error(`Redis is required in CI at ${TEST_REDIS_URL}: ${String(err)}`);
    console.warn(
      `Redis not reachable at ${TEST_REDIS_URL}; the scale-out suite is skipped (run scripts/test-deps.sh)`,
    );
    redisReachable = false;
  } finally {
    redis.disconnect();
  }
  return redisReachable;
}
