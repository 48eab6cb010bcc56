// `npm run bench:first-start [-- --runs 3]`: how long `npm start` takes until both services are
// ready, on a first start (an empty data folder: the database copied from the demo directory
// `npm ci` made, else made and the 20,000 demo listings loaded) and on a restart of the same folder, each run with a folder of its own. Started as
// `npm start` starts them (`node --max-semi-space-size=64 src/main.ts`, no BOOTSTRAP_ADMIN_KEY),
// ready meaning `/readyz` answers 200 on both; the key the first start prints is tried on both
// APIs. Also the CPU time the process used until then (both its threads). Figures in
// docs/benchmarks.md (issue 27).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { benchRun, cpuMs, freePort, load, NODE, ROOT, round, sleep, stop, writeResult } from './lib.ts';

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1] || 3);

interface Start {
  /** seconds from the spawn to `/readyz` 200 on the model API, and on the directory API */
  model_s: number;
  directory_s: number;
  /** CPU seconds the process had used when both were ready */
  cpu_s: number;
  /** a first start: whether its database started as the demo directory `npm ci` made */
  demo_cache?: boolean;
}

/** Starts both services on `dataDir` and waits for both to be ready; returns the times and the log. */
async function start(
  run: ReturnType<typeof benchRun>,
  dataDir: string,
  logName: string,
): Promise<{ start: Start; log: string; urls: { model: string; directory: string }; stop(): Promise<void> }> {
  const [model, directory, smtp] = [await freePort(), await freePort(), await freePort()];
  const began = performance.now();
  const child = run.start(
    NODE,
    ['--max-semi-space-size=64', 'src/main.ts'],
    {
      DATA_DIR: dataDir,
      MODEL_API_PORT: String(model),
      DIRECTORY_API_PORT: String(directory),
      INBOUND_SMTP_PORT: String(smtp),
      HOST: '127.0.0.1',
      BOOTSTRAP_ADMIN_KEY: '',
      LOG_FORMAT: 'json',
    },
    logName,
  );
  const urls = { model: `http://127.0.0.1:${model}`, directory: `http://127.0.0.1:${directory}` };
  const readyAt: Partial<Record<'model' | 'directory', number>> = {};
  let cpu = 0;
  while (readyAt.model === undefined || readyAt.directory === undefined) {
    if (child.exitCode !== null) throw new Error(`the services exited with ${child.exitCode}`);
    if (performance.now() - began > 600_000) throw new Error('not ready within 10 minutes');
    for (const name of ['model', 'directory'] as const) {
      if (readyAt[name] !== undefined) continue;
      const res = await fetch(`${urls[name]}/readyz`).catch(() => undefined);
      if (res?.status === 200) readyAt[name] = (performance.now() - began) / 1000;
    }
    if (readyAt.model !== undefined && readyAt.directory !== undefined) cpu = cpuMs(child.pid) / 1000;
    else await sleep(50);
  }
  return {
    start: {
      model_s: round(readyAt.model ?? 0),
      directory_s: round(readyAt.directory ?? 0),
      cpu_s: round(cpu),
    },
    log: join(run.work, logName),
    urls,
    stop: () => stop(child),
  };
}

/** The admin key the first start printed works on both APIs, and the directory finds restaurants. */
async function tryKey(log: string, urls: { model: string; directory: string }): Promise<void> {
  const secret = /^\s+(sk_[A-Za-z0-9]{48})$/m.exec(readFileSync(log, 'utf8'))?.[1];
  if (!secret) throw new Error('the first start printed no key');
  const auth = { authorization: `Bearer ${secret}` };
  const models = await fetch(`${urls.model}/v1/models`, { headers: auth });
  const search = await fetch(`${urls.directory}/v1/search?q=restaurant&near=52.52,13.405`, { headers: auth });
  const hits = search.ok ? ((await search.json()) as { data: unknown[] }).data.length : 0;
  if (models.status !== 200 || hits === 0) {
    throw new Error(`the printed key: models ${models.status}, search ${search.status} with ${hits} hits`);
  }
}

const run = benchRun('first-start');
const before = load();
const results: Array<{ first: Start; restart: Start }> = [];
try {
  for (let i = 1; i <= runs; i++) {
    const dataDir = join(run.work, `data-${i}`);
    const first = await start(run, dataDir, `first-${i}.log`);
    await tryKey(first.log, first.urls);
    const log = readFileSync(first.log, 'utf8');
    first.start.demo_cache =
      log.includes('demo directory made at install') && !log.includes('demo directory loaded');
    await first.stop();
    const again = await start(run, dataDir, `restart-${i}.log`);
    await again.stop();
    results.push({ first: first.start, restart: again.start });
    console.log(
      `run ${i}: first start ready in ${first.start.directory_s} s (model API ${first.start.model_s} s, ` +
        `${first.start.cpu_s} s CPU, ${first.start.demo_cache ? 'from' : 'without'} the demo cache); restart ${again.start.directory_s} s (${again.start.cpu_s} s CPU)`,
    );
  }
} finally {
  await run.close();
}
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
const date = new Date().toISOString();
const file = writeResult(
  join(ROOT, 'bench', 'results'),
  `first-start-${date.slice(0, 16).replace(/[T:]/g, '-')}.json`,
  { date, commit, cores: availableParallelism(), load: { before, after: load() }, runs: results },
);
console.log(`load average before ${before.join(' ')}, after ${load().join(' ')}; written to ${file}`);
