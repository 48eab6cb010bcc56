// What the model API's main thread promotes under load (issue 33): buffered chat calls at a fixed
// rate (open loop, as bench/stalls.ts sends them) against `npm start`'s model service, with
// `--trace-gc-nvp` in its log; over the measured seconds (after a warm-up): scavenges,
// mark-compacts and their pauses, bytes promoted to the old generation a second, CPU by thread
// (main, V8's GC workers "V8Worker", the database worker) and RSS, and the calls' p50/p99/p99.9.
// With `--sample`, V8's sampling heap profiler runs over the inspector during the load, keeping
// only objects that outlived a scavenge (collected by a mark-compact or still alive at the end):
// the allocation sites of what gets promoted, by bytes (keep the window short, `--seconds 3`, so
// that no mark-compact collects young objects in it). `--floor bare|express|validator` runs a
// floor of bench/model.ts instead of ours; `--get PATH` a GET instead of the chat call;
// `--snapshot FILE` writes a heap snapshot halfway through. Not part of `npm test`.
//
//   node bench/promotion.ts [--rate 1000] [--seconds 10] [--sample] [--database-url URL] [--out bench/results]
//   BENCH_NODE_FLAGS=--max-semi-space-size=16 node bench/promotion.ts   (V8 flags after npm start's)
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { NODE, ROOT, benchRun, load, round, sleep, startOurs, writeResult } from './lib.ts';

const { values: opts } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    sample: { type: 'boolean', default: false },
    /** a floor of bench/model.ts instead of ours: bare (node:http), express, validator */
    floor: { type: 'string' },
    /** sockets the calls share (keep-alive) */
    sockets: { type: 'string', default: '32' },
    /** GET this path instead of the chat call (to tell the layers apart) */
    get: { type: 'string' },
    /** a heap snapshot of the main thread into this file, halfway through the load */
    snapshot: { type: 'string' },
    'database-url': { type: 'string' },
    out: { type: 'string' },
  },
});
const RATE = Number(opts.rate);
const SECONDS = Number(opts.seconds);
const WARMUP = Number(opts.warmup);

const TICK = 100; // USER_HZ
const cpuTicks = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]);
};
const rssMib = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** CPU ticks by thread name ("main" is the main thread), from /proc/PID/task. */
async function ticksByThread(pid: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      const key = Number(tid) === pid ? 'main' : name;
      out[key] = (out[key] ?? 0) + Number(f[11]) + Number(f[12]);
    } catch {
      // the thread ended
    }
  }
  return out;
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

interface Gc {
  at: number;
  isolate: string;
  kind: string;
  pause: number;
  promoted: number;
}

/** The main isolate's collections from `--trace-gc-nvp` lines in the log. */
function parseGc(log: string): Gc[] {
  const out: Gc[] = [];
  for (const line of log.split('\n')) {
    const m = /^\[\d+:(0x[0-9a-f]+)(?::\d+)?\]\s+(\d+) ms: pause=([\d.]+) .*?gc=(\w+)/.exec(line);
    if (!m) continue;
    const promoted = /\bpromoted=(\d+)/.exec(line);
    out.push({
      isolate: m[1]!,
      at: Number(m[2]),
      pause: Number(m[3]),
      kind: m[4]!,
      promoted: promoted ? Number(promoted[1]) : 0,
    });
  }
  return out;
}

const run = benchRun('promotion');

/** A floor server of bench/model.ts answering the chat call with a completion of ours' shape. */
async function startFloor(which: string, flags: string[]) {
  const bodyFile = join(run.work, 'body.json');
  const json = JSON.stringify({
    id: 'chatcmpl-0',
    object: 'chat.completion',
    created: 0,
    model: 'prince',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello there, nice to meet you.' },
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 14, completion_tokens: 8, total_tokens: 22 },
  });
  writeFileSync(bodyFile, JSON.stringify({ json, stream: [] }));
  const script = which === 'bare' ? 'bench/bare-server.ts' : 'bench/express-server.ts';
  const child = run.start(
    NODE,
    [...flags, '--max-semi-space-size=64', ...(process.env.BENCH_NODE_FLAGS?.split(' ') ?? []), script],
    { BENCH_BODY_FILE: bodyFile, PORT: '0', BENCH_VALIDATOR: which === 'validator' ? '1' : '0' },
    'ours.log',
  );
  for (let i = 0; i < 200; i++) {
    const port = /\{"port":(\d+)\}/.exec(readFileSync(join(run.work, 'ours.log'), 'utf8'))?.[1];
    if (port) return { url: `http://127.0.0.1:${port}`, key: 'floor', child };
    await sleep(100);
  }
  throw new Error(`${script} did not start`);
}
try {
  const inspect = opts.sample || opts.snapshot !== undefined;
  const flags = ['--trace-gc-nvp', ...(inspect ? ['--inspect=127.0.0.1:0', '--expose-gc'] : [])];
  const ours = opts.floor
    ? await startFloor(opts.floor, flags)
    : await startOurs(run, {
        name: 'ours',
        env: { DATABASE_URL: opts['database-url'] ?? '' },
        nodeFlags: flags,
      });
  const pid = ours.child.pid!;
  const logFile = join(run.work, 'ours.log');
  const body = JSON.stringify({
    model: 'prince',
    messages: [{ role: 'user', content: 'Say hello in one short sentence.' }],
    max_tokens: 16,
  });
  const agent = new Agent({ keepAlive: true, maxSockets: Number(opts.sockets) });
  const url = new URL(opts.get ?? '/v1/chat/completions', ours.url);
  const method = opts.get ? 'GET' : 'POST';
  const headers: Record<string, string> = opts.get
    ? { authorization: `Bearer ${ours.key}` }
    : {
        authorization: `Bearer ${ours.key}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      };

  let inspector: WebSocket | undefined;
  let nextId = 1;
  const pending = new Map<number, (r: Record<string, unknown>) => void>();
  const send = (method: string, params: object = {}) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      inspector!.send(JSON.stringify({ id, method, params }));
    });
  const chunks: string[] = [];
  if (inspect) {
    const ws = /Debugger listening on (ws:\/\/\S+)/.exec(readFileSync(logFile, 'utf8'))![1]!;
    inspector = new WebSocket(ws);
    await new Promise((r) => inspector!.addEventListener('open', r, { once: true }));
    inspector.addEventListener('message', (e) => {
      const msg = JSON.parse(String(e.data)) as {
        id?: number;
        result?: Record<string, unknown>;
        method?: string;
        params?: { chunk?: string };
      };
      if (msg.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(msg.params?.chunk ?? '');
      if (msg.id && pending.has(msg.id)) pending.get(msg.id)!(msg.result ?? {});
    });
  }

  const total = RATE * (WARMUP + SECONDS);
  const statuses: Record<number, number> = {};
  const latency = new Float64Array(total).fill(Number.NaN);
  const loadBefore = load();
  const begin = performance.now();
  const sampled: { t: number; cpu: number; rss: number; threads: Record<string, number> }[] = [];
  let measuring = false;
  const sampler = setInterval(() => {
    if (!measuring) return;
    void ticksByThread(pid).then((threads) =>
      sampled.push({ t: performance.now(), cpu: cpuTicks(pid), rss: rssMib(pid), threads }),
    );
  }, 1000);
  const logStart = { at: 0, bytes: 0 };
  const warm = sleep(WARMUP * 1000).then(async () => {
    // a full collection first, so that no mark-compact is due in a short window: the objects
    // one collects in the young generation would count with the promoted ones
    if (opts.sample) await send('Runtime.evaluate', { expression: 'gc()' });
    logStart.bytes = readFileSync(logFile).length;
    if (opts.sample)
      await send('HeapProfiler.startSampling', {
        samplingInterval: 16384,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: false,
      });
    measuring = true;
    if (opts.snapshot)
      setTimeout(
        () => {
          void send('HeapProfiler.takeHeapSnapshot', { reportProgress: false }).then(() => {
            writeFileSync(opts.snapshot!, chunks.join(''));
            console.log(`heap snapshot in ${opts.snapshot}`);
          });
        },
        (SECONDS * 1000) / 2,
      );
    sampled.push({
      t: performance.now(),
      cpu: cpuTicks(pid),
      rss: rssMib(pid),
      threads: await ticksByThread(pid),
    });
  });
  await new Promise<void>((finish) => {
    let sent = 0;
    let done = 0;
    const one = (i: number, due: number) => {
      const settle = (ok: boolean) => {
        if (ok) latency[i] = performance.now() - due;
        if (++done === total) finish();
      };
      const req = request(url, { method, agent, headers }, (res) => {
        res.resume();
        res.on('end', () => {
          statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
          settle(res.statusCode === 200);
        });
      });
      req.on('error', () => settle(false));
      req.end(opts.get ? undefined : body);
    };
    const tick = () => {
      const now = performance.now();
      for (; sent < total && begin + (sent * 1000) / RATE <= now; sent++)
        one(sent, begin + (sent * 1000) / RATE);
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  await warm;
  measuring = false;
  clearInterval(sampler);
  const end = {
    t: performance.now(),
    cpu: cpuTicks(pid),
    rss: rssMib(pid),
    threads: await ticksByThread(pid),
  };
  let profile: { head: ProfileNode } | undefined;
  if (opts.sample) {
    // two scavenges drop the last young generation's dead objects from the samples
    await send('Runtime.evaluate', { expression: "gc({ type: 'minor' }); gc({ type: 'minor' })" });
    profile = (await send('HeapProfiler.stopSampling')).profile as { head: ProfileNode };
  }
  inspector?.close();
  agent.destroy();

  await sleep(200);
  const gcs = parseGc(readFileSync(logFile).subarray(logStart.bytes).toString('utf8'));
  // the main isolate is the one with the most scavenges (the database worker's is the other)
  const counts = new Map<string, number>();
  for (const g of gcs) counts.set(g.isolate, (counts.get(g.isolate) ?? 0) + 1);
  const main = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  const mine = gcs.filter((g) => g.isolate === main);
  const start = sampled[0]!;
  const wall = (end.t - start.t) / 1000;
  const scavenges = mine.filter((g) => g.kind === 's');
  const majors = mine.filter((g) => g.kind === 'mc' || g.kind === 'mmc');
  const threadCpu: Record<string, number> = {};
  for (const [k, v] of Object.entries(end.threads))
    threadCpu[k] = round((v - (start.threads[k] ?? 0)) / TICK / wall, 3);
  const measured = Array.from(latency.subarray(RATE * WARMUP)).filter((x) => !Number.isNaN(x));
  measured.sort((a, b) => a - b);
  const at = (p: number) =>
    round(measured[Math.min(measured.length - 1, Math.floor(p * measured.length))] ?? NaN);
  const result = {
    date: new Date().toISOString(),
    command: `node bench/promotion.ts ${process.argv.slice(2).join(' ')}`.trim(),
    nodeFlags: process.env.BENCH_NODE_FLAGS ?? '',
    rate: RATE,
    seconds: round(wall, 1),
    load: { before: loadBefore, after: load() },
    ok: measured.length,
    failed: RATE * SECONDS - measured.length,
    statuses,
    latency: { p50: at(0.5), p99: at(0.99), p999: at(0.999), max: round(measured.at(-1) ?? NaN) },
    scavenges: scavenges.length,
    scavengePauseMs: {
      total: round(scavenges.reduce((s, g) => s + g.pause, 0)),
      max: Math.max(0, ...scavenges.map((g) => g.pause)),
    },
    markCompacts: majors.length,
    markCompactsPerMinute: round((majors.length / wall) * 60, 1),
    markCompactPauseMs: {
      total: round(majors.reduce((s, g) => s + g.pause, 0)),
      max: Math.max(0, ...majors.map((g) => g.pause)),
    },
    promotedMbPerSecond: round(scavenges.reduce((s, g) => s + g.promoted, 0) / 2 ** 20 / wall),
    cpuCores: round((end.cpu - start.cpu) / TICK / wall, 3),
    threadCpuCores: threadCpu,
    rssMib: {
      start: round(start.rss),
      end: round(end.rss),
      max: round(Math.max(...sampled.map((s) => s.rss), end.rss)),
    },
  };
  console.log(JSON.stringify(result, null, 1));

  if (profile) {
    // bytes by allocation site (the top frame in our code or a library's), and by full stack
    const bySite = new Map<string, number>();
    const byStack = new Map<string, number>();
    let totalBytes = 0;
    const walk = (node: ProfileNode, stack: string[]) => {
      const f = node.callFrame;
      const file = f.url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');
      const here = `${f.functionName || '(anon)'} ${file}:${f.lineNumber + 1}`;
      const s = [...stack, here];
      if (node.selfSize) {
        totalBytes += node.selfSize;
        bySite.set(here, (bySite.get(here) ?? 0) + node.selfSize);
        const key = s.slice(-8).join(' < ');
        byStack.set(key, (byStack.get(key) ?? 0) + node.selfSize);
      }
      for (const c of node.children) walk(c, s);
    };
    walk(profile.head, []);
    console.log(`\nsampled ${round(totalBytes / 2 ** 20)} MB outliving a scavenge; top allocation sites:`);
    for (const [k, v] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 30))
      console.log(`${round((v / totalBytes) * 100, 1)}%  ${round(v / 2 ** 20)} MB  ${k}`);
    console.log('\ntop stacks (innermost last):');
    for (const [k, v] of [...byStack].sort((a, b) => b[1] - a[1]).slice(0, 25))
      console.log(`${round((v / totalBytes) * 100, 1)}%  ${k.split(' < ').reverse().join('\n        < ')}\n`);
  }
  if (opts.out)
    console.log(
      `wrote ${writeResult(opts.out, `promotion-${new Date().toISOString().slice(0, 16).replace(/[T:]/g, '-')}.json`, result)}`,
    );
} finally {
  await run.close();
}
