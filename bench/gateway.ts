// The gateway benchmark (issue 22, point 1): what a gateway adds between its client and a real
// inference server. A fake upstream (bench/fake-upstream.ts: bare node:http, OpenAI-compatible,
// a fixed latency of 0 or 50 ms, buffered or streamed) is called directly and through each
// gateway, all relaying to the same upstream process:
//
// - `ours`: `node src/main.ts model` as `npm start` runs it (PGlite, or PostgreSQL with
//   `--database-url`), every text model on the upstream (MODEL_ENGINES), called with a key of the
//   `chat` scope: authentication, the per-key limits (raised so none refuses), the request and
//   response validation and the usage record of every call all on;
// - `portkey`: Portkey's open-source gateway (`@portkey-ai/gateway` from the npm registry,
//   pinned, installed into .bench-peers/ on first use), provider `openai` with the upstream as
//   its custom host: none of the above;
// - `litellm`: LiteLLM's proxy (pinned, from PyPI, in .venv-bench/), one worker, a master key,
//   the model on the upstream (`openai/prince` with `api_base`).
//
// For each: the added latency (p50, p99, p99.9 through the gateway minus the same percentile
// direct, in the same run) at 200, 1,000 and 2,000 requests/s, open loop (request i is due at
// start + i/rate, latency counted from the due time: a stall shows); the highest rate held with
// p99 under 50 ms; CPU ms per request (the gateway's process tree, from /proc); time to first
// chunk and the added delay per chunk when streaming; RSS. The load comes from this process.
//
//   npm run bench:gateway -- [--rates 200,1000,2000] [--latencies 0,50] [--duration 10]
//                            [--database-url postgres://...] [--no-portkey] [--no-litellm]
//
// docs/benchmarks.md explains the method and holds the figures; results go to bench/results/.
import { type ChildProcess, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  benchRun,
  cpuMs,
  mainThreadCpuMs,
  freePort,
  litellm as installedLitellm,
  LITELLM_VERSION,
  load,
  NODE,
  ROOT,
  round,
  rss,
  sleep,
  startOurs as startOursIn,
  stop,
  waitFor,
  writeResult,
} from './lib.ts';

const { values: args } = parseArgs({
  options: {
    rates: { type: 'string', default: '200,1000,2000' },
    latencies: { type: 'string', default: '0,50' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    /** the rates tried for the highest rate held with p99 under 50 ms (upstream latency 0) */
    ladder: { type: 'string', default: '500,1000,1500,2000,3000,4000,6000,8000' },
    'ladder-duration': { type: 'string', default: '5' },
    'stream-clients': { type: 'string', default: '20' },
    'stream-duration': { type: 'string', default: '10' },
    chunks: { type: 'string', default: '16' },
    gap: { type: 'string', default: '5' },
    'database-url': { type: 'string' },
    'no-portkey': { type: 'boolean', default: false },
    'no-litellm': { type: 'boolean', default: false },
    /** only these targets (direct is always measured): e.g. `ours,portkey` */
    only: { type: 'string' },
    out: { type: 'string', default: 'bench/results' },
  },
});
const RATES = args.rates.split(',').map(Number);
const LATENCIES = args.latencies.split(',').map(Number);
const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
const LADDER = args.ladder.split(',').map(Number);
const LADDER_DURATION = Number(args['ladder-duration']);
const STREAM_CLIENTS = Number(args['stream-clients']);
const STREAM_DURATION = Number(args['stream-duration']);
const CHUNKS = Number(args.chunks);
const GAP = Number(args.gap);
const P99_GOAL = 50;

/** The peers measured in docs/benchmarks.md: pinned, installed by this script on first use. */
const PORTKEY_VERSION = '1.15.2';
const HONO_NODE_SERVER = '1.13.8';
const PORTKEY_DIR = join(ROOT, '.bench-peers', `portkey-${PORTKEY_VERSION}-hono-${HONO_NODE_SERVER}`);
const PORTKEY_BIN = join(PORTKEY_DIR, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');

const run = benchRun('gateway');
const { work, start } = run;
const log = (message: string) =>
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${message} (load ${load().join(' ')})`);

type Name = 'direct' | 'ours' | 'portkey' | 'litellm';
interface Target {
  name: Name;
  /** the base URL the chat path is appended to */
  url: string;
  headers: Record<string, string>;
  child: ChildProcess;
}

// --- processes -----------------------------------------------------------------------------

async function startUpstream(): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = start(NODE, ['bench/fake-upstream.ts'], { PORT: String(port) }, 'upstream.log');
  await waitFor(`http://127.0.0.1:${port}/v1/models`, child);
  return { port, child };
}

async function startOurs(upstream: string): Promise<Target> {
  const ours = await startOursIn(run, {
    name: 'ours',
    env: {
      DATABASE_URL: args['database-url'] ?? '',
      LOG_LEVEL: 'info',
      // every text model on the fake upstream; no retry, as the peers are run
      MODEL_ENGINES: JSON.stringify({
        default: { type: 'upstream', baseUrl: `${upstream}/v1`, apiKey: 'sk-upstream', retries: 0 },
      }),
      OUTBOUND_ALLOW_PRIVATE: 'true',
    },
  });
  return { name: 'ours', url: ours.url, headers: { authorization: `Bearer ${ours.key}` }, child: ours.child };
}

async function startPortkey(upstream: string): Promise<Target | undefined> {
  if (!existsSync(PORTKEY_BIN)) {
    log(`installing @portkey-ai/gateway ${PORTKEY_VERSION} into ${PORTKEY_DIR} (first run only)`);
    mkdirSync(PORTKEY_DIR, { recursive: true });
    // Its streamed answers fail ("TypeError: immutable") with @hono/node-server 1.14 and later,
    // which its version range lets npm pick (Portkey-AI/gateway#1389): the last that works.
    writeFileSync(
      join(PORTKEY_DIR, 'package.json'),
      `${JSON.stringify({ private: true, overrides: { '@hono/node-server': HONO_NODE_SERVER } })}\n`,
    );
    try {
      execFileSync(
        'npm',
        ['install', '--no-audit', '--no-fund', '--save-exact', `@portkey-ai/gateway@${PORTKEY_VERSION}`],
        { cwd: PORTKEY_DIR, stdio: 'inherit' },
      );
    } catch (error) {
      console.warn(`Portkey could not be installed (${(error as Error).message}); run without it`);
      return undefined;
    }
  }
  const port = await freePort();
  // as `npx @portkey-ai/gateway` starts it, without its log console (--headless)
  const child = start(NODE, [PORTKEY_BIN, `--port=${port}`, '--headless'], {}, 'portkey.log');
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/`, child);
  return {
    name: 'portkey',
    url,
    headers: {
      authorization: 'Bearer sk-upstream',
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': `${upstream}/v1`,
    },
    child,
  };
}

async function startLitellm(upstream: string): Promise<Target | undefined> {
  const LITELLM = installedLitellm();
  if (!LITELLM) return undefined;
  const port = await freePort();
  const key = 'sk-litellm-bench';
  const config = join(work, 'litellm.yaml');
  writeFileSync(
    config,
    [
      'model_list:',
      '  - model_name: prince',
      '    litellm_params:',
      '      model: openai/prince',
      '      api_key: sk-upstream',
      `      api_base: ${upstream}/v1`,
      'general_settings:',
      `  master_key: ${key}`,
      'litellm_settings:',
      '  telemetry: false',
      '',
    ].join('\n'),
  );
  const child = start(
    LITELLM,
    ['--config', config, '--host', '127.0.0.1', '--port', String(port), '--num_workers', '1'],
    { LITELLM_LOCAL_MODEL_COST_MAP: 'True' },
    'litellm.log',
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health/liveliness`, child);
  return { name: 'litellm', url, headers: { authorization: `Bearer ${key}` }, child };
}

// --- load ----------------------------------------------------------------------------------

function chatBody(latency: number, stream: boolean, gap = 0): Buffer {
  return Buffer.from(
    JSON.stringify({
      model: 'prince',
      messages: [
        {
          role: 'user',
          content: `Say hello in one short sentence. latency=${latency} gap=${gap} chunks=${CHUNKS}`,
        },
      ],
      max_tokens: 64,
      ...(stream ? { stream: true } : {}),
    }),
  );
}

function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface OpenLoop {
  rate: number;
  upstreamLatencyMs: number;
  requests: number;
  ok: number;
  failed: number;
  /** the sender gave up: more than two seconds of requests waited unanswered */
  overloaded: boolean;
  achieved: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  cpuMsPerRequest: number;
  /** the CPU of the gateway's main thread alone (the one that serves HTTP) */
  mainThreadCpuMsPerRequest: number;
  load: [number, number, number];
}

/**
 * Open loop at `rate`/s for `seconds`: request i due at start + i/rate, over a fixed pool of
 * keep-alive sockets large enough for the rate at this latency; latency from the due time.
 */
async function openLoop(target: Target, rate: number, latency: number, seconds: number): Promise<OpenLoop> {
  const sockets = Math.max(32, Math.ceil((rate * (latency + 25) * 2) / 1000));
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const body = chatBody(latency, false);
  const total = Math.round(rate * seconds);
  const latencies = new Float64Array(total);
  let ok = 0;
  let failed = 0;
  let sent = 0;
  let done = 0;
  let overloaded = false;
  const cpuBefore = cpuMs(target.child.pid);
  const mainBefore = mainThreadCpuMs(target.child.pid);
  const url = new URL('/v1/chat/completions', target.url);
  const headers = {
    ...target.headers,
    'content-type': 'application/json',
    'content-length': String(body.length),
  };
  const begin = performance.now();
  await new Promise<void>((finish) => {
    const settle = () => {
      if (++done === sent && (sent === total || overloaded)) finish();
    };
    const one = (due: number) => {
      const req = request(url, { method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) latencies[ok++] = performance.now() - due;
          else failed++;
          settle();
        });
        res.on('error', () => {
          failed++;
          settle();
        });
      });
      req.on('error', () => {
        failed++;
        settle();
      });
      req.end(body);
    };
    const tick = () => {
      const now = performance.now();
      while (sent < total && begin + (sent * 1000) / rate <= now) one(begin + (sent++ * 1000) / rate);
      if (sent - done > rate * 2) overloaded = true; // two seconds behind: it does not hold the rate
      if (sent < total && !overloaded) setTimeout(tick, 1);
      else if (done === sent) finish();
    };
    tick();
  });
  const elapsed = (performance.now() - begin) / 1000;
  const cpu = cpuMs(target.child.pid) - cpuBefore;
  const mainCpu = mainThreadCpuMs(target.child.pid) - mainBefore;
  agent.destroy();
  const sorted = latencies.subarray(0, ok).sort();
  return {
    rate,
    upstreamLatencyMs: latency,
    requests: sent,
    ok,
    failed,
    overloaded,
    achieved: Math.round(ok / elapsed),
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    p999: round(percentile(sorted, 99.9)),
    max: round(sorted.at(-1) ?? Number.NaN),
    cpuMsPerRequest: round(cpu / Math.max(1, ok + failed), 3),
    mainThreadCpuMsPerRequest: round(mainCpu / Math.max(1, ok + failed), 3),
    load: load(),
  };
}

interface Streamed {
  upstreamLatencyMs: number;
  gapMs: number;
  clients: number;
  streams: number;
  failed: number;
  streamsPerSecond: number;
  /** time from sending to the first content chunk */
  ttfcP50: number;
  ttfcP99: number;
  /** time from sending to content chunk k, p50 and p99 for each k (k = 0 is the first chunk) */
  chunkP50: number[];
  chunkP99: number[];
  chunksPerStream: number;
  cpuMsPerStream: number;
  load: [number, number, number];
}

/** `clients` streams at a time, each a new one when the last ends, for `seconds`. */
async function streaming(target: Target, latency: number, seconds: number): Promise<Streamed> {
  const agent = new Agent({ keepAlive: true, maxSockets: STREAM_CLIENTS });
  const body = chatBody(latency, true, GAP);
  const url = new URL('/v1/chat/completions', target.url);
  const headers = {
    ...target.headers,
    'content-type': 'application/json',
    'content-length': String(body.length),
  };
  /** arrival of content chunk k, from sending, over all streams */
  const arrivals: number[][] = Array.from({ length: CHUNKS }, () => []);
  let streams = 0;
  let failed = 0;
  let chunks = 0;
  const cpuBefore = cpuMs(target.child.pid);
  const until = performance.now() + seconds * 1000;
  const once = () =>
    new Promise<void>((done) => {
      const at = performance.now();
      let k = 0;
      let carry = '';
      const req = request(url, { method: 'POST', agent, headers }, (res) => {
        if (res.statusCode !== 200) {
          failed++;
          res.resume();
          res.on('end', done);
          return;
        }
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          const now = performance.now();
          const events = (carry + text).split('\n\n');
          carry = events.pop() ?? '';
          for (const event of events) {
            // content chunks only (the finish and usage chunks are not counted)
            if (!event.startsWith('data: {') || !event.includes('"content":"')) continue;
            arrivals[k]?.push(now - at);
            k++;
            chunks++;
          }
        });
        res.on('end', () => {
          streams++;
          done();
        });
        res.on('error', () => {
          failed++;
          done();
        });
      });
      req.on('error', () => {
        failed++;
        done();
      });
      req.end(body);
    });
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: STREAM_CLIENTS }, async () => {
      while (performance.now() < until) await once();
    }),
  );
  const elapsed = (performance.now() - begin) / 1000;
  const cpu = cpuMs(target.child.pid) - cpuBefore;
  agent.destroy();
  for (const list of arrivals) list.sort((a, b) => a - b);
  const ttfc = arrivals[0] ?? [];
  return {
    upstreamLatencyMs: latency,
    gapMs: GAP,
    clients: STREAM_CLIENTS,
    streams,
    failed,
    streamsPerSecond: round(streams / elapsed, 1),
    ttfcP50: round(percentile(ttfc, 50)),
    ttfcP99: round(percentile(ttfc, 99)),
    chunkP50: arrivals.map((list) => round(percentile(list, 50))),
    chunkP99: arrivals.map((list) => round(percentile(list, 99))),
    chunksPerStream: streams ? round(chunks / streams, 1) : 0,
    cpuMsPerStream: round(cpu / Math.max(1, streams), 3),
    load: load(),
  };
}

/** One buffered and one streamed call through `target`: it relays, or the run stops here. */
async function check(target: Target): Promise<void> {
  for (const stream of [false, true]) {
    const res = await fetch(new URL('/v1/chat/completions', target.url), {
      method: 'POST',
      headers: { ...target.headers, 'content-type': 'application/json' },
      body: chatBody(0, stream).toString(),
    });
    const text = await res.text();
    const relayed = stream
      ? text.includes('"content":"Hello ') && text.includes('[DONE]')
      : text.includes('fake upstream');
    if (res.status !== 200 || !relayed) {
      throw new Error(`${target.name} (stream ${stream}) answered ${res.status}: ${text.slice(0, 300)}`);
    }
  }
}

// --- the run -------------------------------------------------------------------------------

async function main() {
  const started = new Date();
  const before = load();
  log(`gateway benchmark on ${cpus().length} cores; work dir ${work}`);
  const upstream = await startUpstream();
  const base = `http://127.0.0.1:${upstream.port}`;
  const wanted = (name: Name) => !args.only || args.only.split(',').includes(name);
  const direct: Target = { name: 'direct', url: base, headers: {}, child: upstream.child };
  const ours = wanted('ours') ? await startOurs(base) : undefined;
  const portkey = wanted('portkey') && !args['no-portkey'] ? await startPortkey(base) : undefined;
  const litellm = wanted('litellm') && !args['no-litellm'] ? await startLitellm(base) : undefined;
  const targets = [direct, ours, portkey, litellm].filter((t): t is Target => t !== undefined);
  for (const target of targets) await check(target);
  await sleep(2000);
  const rssRest = Object.fromEntries(targets.map((t) => [t.name, rss(t.child.pid).now]));

  // 1. added latency at fixed rates, per upstream latency
  const fixed: Record<string, OpenLoop[]> = {};
  for (const latency of LATENCIES) {
    for (const target of targets) {
      for (const rate of RATES) {
        const last = fixed[target.name]?.at(-1);
        if (last && last.upstreamLatencyMs === latency && last.overloaded) continue; // a lower rate already failed
        log(`open loop ${rate}/s, upstream ${latency} ms: ${target.name}`);
        await openLoop(target, rate, latency, WARMUP);
        const result = await openLoop(target, rate, latency, DURATION);
        (fixed[target.name] ??= []).push(result);
        log(
          `  p50 ${result.p50} p99 ${result.p99} p99.9 ${result.p999} ms, ${result.achieved}/s, ` +
            `${result.cpuMsPerRequest} CPU ms/req (main thread ${result.mainThreadCpuMsPerRequest})${result.overloaded ? ', did not hold the rate' : ''}`,
        );
        await sleep(1000);
      }
    }
  }

  // 2. the highest rate held with p99 under 50 ms (upstream latency 0)
  const ladder: Record<string, { rate: number; p99: number; achieved: number; overloaded: boolean }[]> = {};
  const highest: Record<string, number> = {};
  for (const target of targets) {
    highest[target.name] = 0;
    for (const rate of LADDER) {
      await openLoop(target, rate, 0, 1);
      const r = await openLoop(target, rate, 0, LADDER_DURATION);
      (ladder[target.name] ??= []).push({ rate, p99: r.p99, achieved: r.achieved, overloaded: r.overloaded });
      log(`ladder ${target.name} ${rate}/s: p99 ${r.p99} ms, ${r.achieved}/s`);
      const held = !r.overloaded && r.failed === 0 && r.p99 < P99_GOAL && r.achieved >= rate * 0.95;
      if (!held) break;
      highest[target.name] = rate;
      await sleep(1000);
    }
  }

  // 3. streaming
  const streamed: Record<string, Streamed[]> = {};
  for (const latency of LATENCIES) {
    for (const target of targets) {
      log(
        `streaming, ${STREAM_CLIENTS} clients, upstream ${latency} ms, ${GAP} ms between chunks: ${target.name}`,
      );
      await streaming(target, latency, WARMUP);
      const s = await streaming(target, latency, STREAM_DURATION);
      (streamed[target.name] ??= []).push(s);
      log(
        `  TTFC p50 ${s.ttfcP50} p99 ${s.ttfcP99} ms, last chunk p50 ${s.chunkP50.at(-1)} ms, ${s.streamsPerSecond} streams/s`,
      );
    }
  }
  const rssAfter = Object.fromEntries(targets.map((t) => [t.name, rss(t.child.pid)]));
  const after = load();
  for (const target of targets) if (target !== direct) await stop(target.child);
  await stop(upstream.child);

  // added = through the gateway minus direct, same rate and upstream latency
  const added: Record<string, object[]> = {};
  for (const target of targets) {
    if (target === direct) continue;
    added[target.name] = (fixed[target.name] ?? []).map((r) => {
      const d = fixed.direct?.find((x) => x.rate === r.rate && x.upstreamLatencyMs === r.upstreamLatencyMs);
      return {
        rate: r.rate,
        upstreamLatencyMs: r.upstreamLatencyMs,
        held: !r.overloaded && r.failed === 0,
        p50: d ? round(r.p50 - d.p50) : null,
        p99: d ? round(r.p99 - d.p99) : null,
        p999: d ? round(r.p999 - d.p999) : null,
        cpuMsPerRequest: r.cpuMsPerRequest,
        mainThreadCpuMsPerRequest: r.mainThreadCpuMsPerRequest,
      };
    });
  }
  const addedStreaming: Record<string, object[]> = {};
  for (const target of targets) {
    if (target === direct) continue;
    addedStreaming[target.name] = (streamed[target.name] ?? []).map((s) => {
      const d = streamed.direct?.find((x) => x.upstreamLatencyMs === s.upstreamLatencyMs);
      // chunk k through the gateway minus chunk k direct, averaged over the chunks after the first
      const perChunk = (mine: number[], theirs: number[]) => {
        const diffs = mine.slice(1).map((x, k) => x - (theirs[k + 1] ?? Number.NaN));
        return round(diffs.reduce((a, b) => a + b, 0) / Math.max(1, diffs.length));
      };
      return {
        upstreamLatencyMs: s.upstreamLatencyMs,
        ttfcP50: d ? round(s.ttfcP50 - d.ttfcP50) : null,
        ttfcP99: d ? round(s.ttfcP99 - d.ttfcP99) : null,
        perChunkP50: d ? perChunk(s.chunkP50, d.chunkP50) : null,
        perChunkP99: d ? perChunk(s.chunkP99, d.chunkP99) : null,
      };
    });
  }
  const p99At = (name: string, latency: number) =>
    (
      added[name] as
        { rate: number; upstreamLatencyMs: number; p99: number | null; held: boolean }[] | undefined
    )?.find((a) => a.rate === 1000 && a.upstreamLatencyMs === latency);
  const goal = LATENCIES.map((latency) => {
    const o = p99At('ours', latency);
    const p = p99At('portkey', latency);
    return {
      upstreamLatencyMs: latency,
      oursAddedP99: o?.p99 ?? null,
      portkeyAddedP99: p?.p99 ?? null,
      met: o && p && o.held ? !p.held || (o.p99 ?? Infinity) <= (p.p99 ?? -Infinity) : null,
    };
  });

  const results = {
    date: started.toISOString(),
    command: [
      'npm run bench:gateway',
      ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : []),
    ].join(' '),
    node: process.version,
    cpu: `${cpus().length} x ${cpus()[0]?.model ?? '?'}`,
    load: { before, after },
    storage: args['database-url'] ? 'postgres' : 'pglite',
    peers: {
      portkey: portkey ? `@portkey-ai/gateway ${PORTKEY_VERSION}` : null,
      litellm: litellm ? `litellm[proxy] ${LITELLM_VERSION}` : null,
    },
    settings: {
      rates: RATES,
      latencies: LATENCIES,
      duration: DURATION,
      warmup: WARMUP,
      ladder: LADDER,
      ladderDuration: LADDER_DURATION,
      streamClients: STREAM_CLIENTS,
      streamDuration: STREAM_DURATION,
      chunks: CHUNKS,
      gapMs: GAP,
    },
    fixedRate: fixed,
    added,
    highestRateP99Under50ms: highest,
    ladder,
    streaming: streamed,
    addedStreaming,
    rssMiB: { rest: rssRest, after: rssAfter },
    goal: { addedP99At1000NoWorseThanPortkey: goal },
  };

  console.log();
  for (const latency of LATENCIES) {
    console.log(`upstream latency ${latency} ms: added latency (ms) through each gateway, open loop`);
    console.table(
      targets
        .filter((t) => t !== direct)
        .map((t) => {
          const row: Record<string, unknown> = { gateway: t.name };
          for (const a of added[t.name] as {
            rate: number;
            upstreamLatencyMs: number;
            p50: number;
            p99: number;
            p999: number;
            held: boolean;
            cpuMsPerRequest: number;
          }[]) {
            if (a.upstreamLatencyMs !== latency) continue;
            row[`${a.rate}/s p50/p99/p99.9`] = a.held ? `${a.p50} / ${a.p99} / ${a.p999}` : 'not held';
            row[`${a.rate}/s CPU ms`] = a.cpuMsPerRequest;
          }
          return row;
        }),
    );
  }
  console.log('highest rate with p99 < 50 ms (upstream 0 ms):', highest);
  console.log('added when streaming (ms):', JSON.stringify(addedStreaming));
  console.log('RSS (MiB):', JSON.stringify(results.rssMiB));
  console.log('goal:', JSON.stringify(goal));
  const stamp = started.toISOString().slice(0, 16).replace(/[T:]/g, '-');
  const file = writeResult(args.out, `gateway-${stamp}-${results.storage}.json`, results);
  console.log(`wrote ${file}`);
}

try {
  await main();
} finally {
  await run.close();
}
