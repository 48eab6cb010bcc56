// `DATABASE_URL=postgres://... SEARCH_INDEX_SNAPSHOT=FILE npm run bench:index-restart [-- --runs 3]`:
// how long the directory takes to restart from its search-index snapshot (issue 33 point 3: ≤ 10 s
// at 1M listings). Each run starts the directory as `npm run start:directory` does, on a data
// folder of its own, and times it from the spawn to `/readyz` 200; also its CPU, RSS, where the
// index came from (`snapshot`, or why it was built) and the load's own time from its log. A run
// whose snapshot is missing or stale builds the index and writes the file once ready: the next
// run reads it (that first run is reported, marked, not counted as a restart).
// Figures in docs/benchmarks-directory.md.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchRun, cpuMs, freePort, load, NODE, ROOT, round, rss, sleep, stop, writeResult } from './lib.ts';

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1] || 3);
const snapshot = process.env.SEARCH_INDEX_SNAPSHOT;
if (!process.env.DATABASE_URL || !snapshot || snapshot === 'off') {
  console.error('set DATABASE_URL (a directory database) and SEARCH_INDEX_SNAPSHOT (a file)');
  process.exit(2);
}

interface Restart {
  ready_s: number;
  cpu_s: number;
  rss_mib: number;
  /** the log's "search index loaded": where from, and its ms */
  from: string;
  index_ms: number;
  written?: number | string;
  load: [number, number, number];
}

const run = benchRun('index-restart');
const results: Restart[] = [];
try {
  for (let k = 0; k < runs; k++) {
    const [directory, model, smtp] = [await freePort(), await freePort(), await freePort()];
    const log = `run-${k}.log`;
    const loadBefore = load();
    const began = performance.now();
    const child = run.start(
      NODE,
      ['--max-semi-space-size=64', 'src/main.ts', 'directory'],
      {
        DATA_DIR: join(run.work, `data-${k}`),
        DIRECTORY_API_PORT: String(directory),
        MODEL_API_PORT: String(model),
        INBOUND_SMTP_PORT: String(smtp),
        HOST: '127.0.0.1',
        LOG_FORMAT: 'json',
      },
      log,
    );
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the directory exited with ${child.exitCode}`);
      if (performance.now() - began > 900_000) throw new Error('not ready within 15 minutes');
      const res = await fetch(`http://127.0.0.1:${directory}/readyz`).catch(() => undefined);
      if (res?.status === 200) break;
      await sleep(50);
    }
    const ready = (performance.now() - began) / 1000;
    const cpu = cpuMs(child.pid) / 1000;
    const memory = rss(child.pid).now;
    const lines = () => readFileSync(join(run.work, log), 'utf8').split('\n');
    const loaded = JSON.parse(lines().find((l) => l.includes('"search index loaded"')) ?? '{}') as {
      from?: string;
      ms?: number;
      written?: number | string;
    };
    const result: Restart = {
      ready_s: round(ready),
      cpu_s: round(cpu),
      rss_mib: memory,
      from: loaded.from ?? '?',
      index_ms: loaded.ms ?? 0,
      load: loadBefore,
    };
    if (loaded.written === 'due after ready') {
      // a build: wait for its snapshot, which the next run reads
      for (let i = 0; i < 1200 && !lines().some((l) => l.includes('search index snapshot')); i++)
        await sleep(500);
      const line = lines().find((l) => l.includes('search index snapshot'));
      result.written = line
        ? ((JSON.parse(line) as { written?: number; why?: string }).written ?? 'not written')
        : 'timed out';
    }
    console.log(JSON.stringify(result));
    results.push(result);
    await stop(child);
  }
} finally {
  await run.close();
}
const restarts = results.filter((r) => r.from === 'snapshot');
const file = writeResult(
  join(ROOT, 'bench/results'),
  `index-restart-${new Date().toISOString().slice(0, 16).replace(/[T:]/g, '-')}.json`,
  {
    command: `SEARCH_INDEX_SNAPSHOT=${snapshot} npm run bench:index-restart -- --runs ${runs}`,
    database: process.env.DATABASE_URL.replace(/\/\/[^@]*@/, '//'),
    runs: results,
    restart_ready_s: restarts.map((r) => r.ready_s),
  },
);
console.log(
  `restarts from the snapshot, ready in: ${restarts.map((r) => `${r.ready_s} s`).join(', ')}; ${file}`,
);
