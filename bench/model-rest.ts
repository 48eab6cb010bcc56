// The model API's memory at rest (issue 33): started as `npm start` runs it (PGlite under a fresh
// data folder of the run, or DATABASE_URL's PostgreSQL with --database-url), given one buffered
// chat call when --call is set, then left alone; its RSS read WAIT seconds after ready, with
// the split /proc/PID/smaps_rollup gives (anonymous, file-backed) and what the main thread's
// V8 says of its heap (process.memoryUsage() through a probe module, on SIGUSR2). Several runs
// give the median. Not part of `npm test`.
//
//   node bench/model-rest.ts [--runs 3] [--wait 20] [--call] [--database-url URL] [--env K=V ...]
//                            [--heap-snapshot FILE]   (the main thread's, at the reading)
//
// --env adds a variable to the service's environment (e.g. --env MALLOC_ARENA_MAX=2), to
// compare settings in one run of the script.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { benchRun, load, rss, sleep, startOurs, writeResult, ROOT } from './lib.ts';

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    wait: { type: 'string', default: '20' },
    call: { type: 'boolean', default: false },
    'database-url': { type: 'string' },
    'heap-snapshot': { type: 'string' },
    env: { type: 'string', multiple: true, default: [] },
    out: { type: 'string' },
  },
});

/** Written into the run's folder: the main thread's V8 figures into a file on SIGUSR2. */
const PROBE = `
import { writeFileSync } from 'node:fs';
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8';
process.on('SIGUSR2', () => {
  if (process.env.BENCH_HEAP_SNAPSHOT) writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT);
  const mib = (x) => Math.round((x / 1048576) * 10) / 10;
  const m = process.memoryUsage();
  const h = getHeapStatistics();
  writeFileSync(process.env.BENCH_PROBE_OUT, JSON.stringify({
    heap_used: mib(m.heapUsed), heap_total: mib(m.heapTotal), external: mib(m.external),
    array_buffers: mib(m.arrayBuffers), malloced: mib(h.malloced_memory),
  }));
});
`;

function smaps(pid: number): Record<string, number> {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return {
    anonymous: Math.round(kb('Anonymous') / 102.4) / 10,
    file_backed: Math.round((kb('Rss') - kb('Anonymous')) / 102.4) / 10,
  };
}

const env = Object.fromEntries(
  opts.env.map((pair) => {
    const at = pair.indexOf('=');
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);
const runs: Record<string, unknown>[] = [];
for (let i = 0; i < Number(opts.runs); i++) {
  const run = benchRun('model-rest');
  const probe = join(run.work, 'probe.mjs');
  const probeOut = join(run.work, 'probe.json');
  writeFileSync(probe, PROBE);
  try {
    const ours = await startOurs(run, {
      name: `rest-${i}`,
      nodeFlags: ['--import', probe],
      env: {
        ...env,
        BENCH_PROBE_OUT: probeOut,
        ...(opts['heap-snapshot'] ? { BENCH_HEAP_SNAPSHOT: opts['heap-snapshot'] } : {}),
        ...(opts['database-url'] ? { DATABASE_URL: opts['database-url'] } : {}),
      },
    });
    if (opts.call) {
      const res = await fetch(`${ours.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ours.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'prince', messages: [{ role: 'user', content: 'Hello there' }] }),
      });
      if (!res.ok) throw new Error(`chat: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    }
    await sleep(Number(opts.wait) * 1000);
    const pid = ours.child.pid!;
    ours.child.kill('SIGUSR2');
    await sleep(opts['heap-snapshot'] ? 15_000 : 500);
    const figures = {
      rss_mib: rss(pid).now,
      ...smaps(pid),
      v8_main_thread: JSON.parse(readFileSync(probeOut, 'utf8')) as unknown,
      load: load(),
    };
    console.log(JSON.stringify(figures));
    runs.push(figures);
  } finally {
    await run.close();
  }
}
const sorted = runs.map((r) => r.rss_mib as number).sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)];
console.log(`RSS at rest, MiB: ${sorted.join(', ')} (median ${median})`);
const stamp = new Date().toISOString().slice(0, 16).replace(/[T:]/g, '-');
const target = resolve(ROOT, 'bench', 'results', opts.out ?? `model-rest-${stamp}.json`);
const file = writeResult(dirname(target), basename(target), {
  options: opts,
  median_rss_mib: median,
  runs,
});
console.log(file);
