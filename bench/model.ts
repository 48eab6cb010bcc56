// The model API benchmark (issue 3, point 11): buffered and streamed chat through our model
// service, against a bare node:http server answering the same bytes and against LiteLLM's proxy
// (mock_response, no network), and against two floors: Express alone and Express with the OpenAPI
// validator answering the same bytes (bench/express-server.ts; `--no-floors` leaves them out),
// which show what the framework costs before any work of ours. Every server runs in a child process; this process only makes
// load (autocannon for closed-loop throughput, an open-loop fixed-rate sender for the 1,000 rps
// p99, a streaming client for chunks/s and time to first byte) and reads the servers' RSS.
// `--relay` adds a second instance of ours whose MODEL_ENGINES relays every text model to the bare
// server as an OpenAI-compatible upstream: the chat path through the upstream engine and the
// outbound guard, against the bare server's own figures.
// `npm run bench:model -- [--duration 15] [--connections 10] [--rate 1000] [--no-litellm] [--relay] [--profile]`
// docs/benchmarks.md explains the method and holds the figures.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, type ClientRequest, type IncomingMessage, request } from 'node:http';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import {
  benchRun,
  cpuMs,
  freePort,
  litellm as installedLitellm,
  load,
  NODE,
  round,
  rss,
  sleep,
  startOurs as startOursIn,
  stop,
  waitFor,
  writeResult,
} from './lib.ts';
import { summarize } from './profile-summary.ts';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
    rate: { type: 'string', default: '1000' },
    'rate-duration': { type: 'string', default: '15' },
    'rate-connections': { type: 'string', default: '16' },
    streams: { type: 'string', default: '10' },
    'stream-tokens': { type: 'string', default: '64' },
    'no-litellm': { type: 'boolean', default: false },
    /** Leave out the Express and Express + validator floors. */
    'no-floors': { type: 'boolean', default: false },
    /** Add ours relaying chat to the bare server (MODEL_ENGINES upstream). */
    relay: { type: 'boolean', default: false },
    /** Our service on PostgreSQL instead of PGlite (an empty database it may migrate). */
    'database-url': { type: 'string' },
    profile: { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results' },
  },
});
const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
const CONNECTIONS = Number(args.connections);
const RATE = Number(args.rate);
const RATE_DURATION = Number(args['rate-duration']);
const RATE_CONNECTIONS = Number(args['rate-connections']);
const STREAMS = Number(args.streams);
const STREAM_TOKENS = Number(args['stream-tokens']);

const PROMPT = [{ role: 'user', content: 'Say hello in one short sentence.' }];
const BUFFERED = JSON.stringify({ model: 'prince', messages: PROMPT, max_tokens: 16 });
const STREAMED = JSON.stringify({
  model: 'prince',
  messages: PROMPT,
  max_tokens: STREAM_TOKENS,
  stream: true,
});

const run = benchRun('model');
const { work, start } = run;

interface Target {
  name: 'ours' | 'relay' | 'bare' | 'express' | 'express+validator' | 'litellm';
  url: string;
  key: string;
  child: ChildProcess;
}

// --- servers -------------------------------------------------------------------------------

async function startOurs(name: 'ours' | 'relay' = 'ours', engines = ''): Promise<Target> {
  // As `npm start` runs it (PGlite under DATA_DIR, reference engine, LOG_LEVEL info).
  const ours = await startOursIn(run, {
    name,
    nodeFlags: args.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(work, 'profile')}`] : [],
    env: { MODEL_ENGINES: engines, DATABASE_URL: args['database-url'] ?? '' },
  });
  return { name, ...ours };
}

async function startBare(recorded: { json: string; stream: string[] }): Promise<Target> {
  const file = join(work, 'recorded.json');
  writeFileSync(file, JSON.stringify(recorded));
  const port = await freePort();
  const child = start(
    NODE,
    ['bench/bare-server.ts'],
    { BENCH_BODY_FILE: file, PORT: String(port) },
    'bare.log',
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100 && !existsSync(join(work, 'bare.log')); i++) await sleep(50);
  for (let i = 0; i < 100 && !readFileSync(join(work, 'bare.log'), 'utf8').includes('port'); i++)
    await sleep(50);
  return { name: 'bare', url, key: 'none', child };
}

/** Express alone, or Express with the OpenAPI validator, answering the recorded bytes. */
async function startExpress(
  recorded: { json: string; stream: string[] },
  validator: boolean,
): Promise<Target> {
  const file = join(work, 'recorded.json');
  writeFileSync(file, JSON.stringify(recorded));
  const port = await freePort();
  const log = validator ? 'express-validator.log' : 'express.log';
  const child = start(
    NODE,
    ['bench/express-server.ts'],
    { BENCH_BODY_FILE: file, PORT: String(port), BENCH_VALIDATOR: validator ? '1' : '0' },
    log,
  );
  const url = `http://127.0.0.1:${port}`;
  for (
    let i = 0;
    i < 200 && !(existsSync(join(work, log)) && readFileSync(join(work, log), 'utf8').includes('port'));
    i++
  )
    await sleep(50);
  return { name: validator ? 'express+validator' : 'express', url, key: 'sk-bench', child };
}

async function startLitellm(content: string): Promise<Target | undefined> {
  if (args['no-litellm']) return undefined;
  const LITELLM = installedLitellm();
  if (!LITELLM) return undefined;
  const port = await freePort();
  const key = 'sk-litellm-bench';
  const config = join(work, 'litellm.yaml');
  // One worker, as our service is one process; the model answers `content` without any network.
  writeFileSync(
    config,
    [
      'model_list:',
      '  - model_name: prince',
      '    litellm_params:',
      '      model: openai/prince',
      '      api_key: sk-unused',
      `      mock_response: ${JSON.stringify(content)}`,
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
  return { name: 'litellm', url, key, child };
}

/** Samples a process's RSS every 250 ms while `run` runs; the peak and the median. */
async function underLoad<T>(
  pid: number | undefined,
  run: () => Promise<T>,
): Promise<{ result: T; peak: number; median: number }> {
  const samples: number[] = [];
  const timer = setInterval(() => samples.push(rss(pid).now), 250);
  try {
    const result = await run();
    samples.sort((a, b) => a - b);
    return { result, peak: samples.at(-1) ?? NaN, median: samples[Math.floor(samples.length / 2)] ?? NaN };
  } finally {
    clearInterval(timer);
  }
}

// --- load ----------------------------------------------------------------------------------

interface Throughput {
  rps: number;
  /** autocannon's latencies are whole milliseconds: 0 is under 1 ms; the mean keeps decimals. */
  mean: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** CPU time the server process used per request: steadier than req/s on a shared machine. */
  cpuMsPerRequest: number;
  load: [number, number, number];
}

async function closedLoop(target: Target, seconds: number): Promise<Throughput> {
  const cpuBefore = cpuMs(target.child.pid);
  const result = await autocannon({
    url: `${target.url}/v1/chat/completions`,
    method: 'POST',
    headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' },
    body: BUFFERED,
    connections: CONNECTIONS,
    duration: seconds,
  });
  return {
    rps: Math.round(result.requests.total / seconds),
    mean: round(result.latency.mean),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    cpuMsPerRequest: round((cpuMs(target.child.pid) - cpuBefore) / result.requests.total, 3),
    load: load(),
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

interface FixedRate {
  rate: number;
  achieved: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  /** p99 of the time from sending to the answer, without the wait behind a late send. */
  p99Service: number;
  requests: number;
  failed: number;
  load: [number, number, number];
}

/** A chat completion request to `target` on `agent`; the caller ends it with `body`. */
function postChat(
  target: Target,
  agent: Agent,
  body: Buffer,
  onResponse: (res: IncomingMessage) => void,
): ClientRequest {
  return request(
    `${target.url}/v1/chat/completions`,
    {
      method: 'POST',
      agent,
      headers: {
        authorization: `Bearer ${target.key}`,
        'content-type': 'application/json',
        'content-length': body.length,
      },
    },
    onResponse,
  );
}

/**
 * Open loop at a fixed rate: request i is due at start + i/rate whatever happened to the others,
 * and its latency counts from when it was due, so a stall shows in the percentiles (no
 * coordinated omission). autocannon's rate option sends each second's quota back to back.
 */
async function fixedRate(target: Target, rate: number, seconds: number): Promise<FixedRate> {
  // A fixed pool of connections, as wrk2 keeps: requests that find them all busy wait in the
  // agent (and the wait counts). An open-ended pool turns one hiccup into a storm of new
  // connections that the server then pays for (p99 of seconds in our first runs).
  const agent = new Agent({ keepAlive: true, maxSockets: RATE_CONNECTIONS });
  const total = Math.round(rate * seconds);
  const latencies: number[] = [];
  const service: number[] = [];
  let failed = 0;
  let sent = 0;
  let done = 0;
  const begin = performance.now();
  const body = Buffer.from(BUFFERED);
  await new Promise<void>((resolve) => {
    const one = (due: number) => {
      const at = performance.now();
      const req = postChat(target, agent, body, (res) => {
        res.resume();
        res.on('end', () => {
          const end = performance.now();
          if (res.statusCode === 200) {
            latencies.push(end - due);
            service.push(end - at);
          } else failed++;
          if (++done === total) resolve();
        });
      });
      req.on('error', () => {
        failed++;
        if (++done === total) resolve();
      });
      req.end(body);
    };
    const tick = () => {
      const now = performance.now();
      while (sent < total && begin + (sent * 1000) / rate <= now) one(begin + (sent++ * 1000) / rate);
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  const elapsed = (performance.now() - begin) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  service.sort((a, b) => a - b);
  return {
    rate,
    achieved: Math.round(latencies.length / elapsed),
    p50: round(percentile(latencies, 50)),
    p90: round(percentile(latencies, 90)),
    p99: round(percentile(latencies, 99)),
    p999: round(percentile(latencies, 99.9)),
    max: round(latencies.at(-1) ?? NaN),
    p99Service: round(percentile(service, 99)),
    requests: total,
    failed,
    load: load(),
  };
}

interface Streaming {
  chunksPerSecond: number;
  streamsPerSecond: number;
  chunksPerStream: number;
  ttfbP50: number;
  ttfbP99: number;
  failed: number;
  load: [number, number, number];
}

/** `streams` clients each open one stream after another for `seconds`; SSE data events are counted. */
async function streaming(target: Target, seconds: number, streams = STREAMS): Promise<Streaming> {
  const agent = new Agent({ keepAlive: true, maxSockets: streams });
  const body = Buffer.from(STREAMED);
  const ttfb: number[] = [];
  let chunks = 0;
  let completed = 0;
  let failed = 0;
  const until = performance.now() + seconds * 1000;
  const once = () =>
    new Promise<void>((resolve) => {
      const at = performance.now();
      let first = true;
      let carry = '';
      const req = postChat(target, agent, body, (res) => {
        if (res.statusCode !== 200) {
          failed++;
          res.resume();
          res.on('end', resolve);
          return;
        }
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          if (first) {
            ttfb.push(performance.now() - at);
            first = false;
          }
          const events = (carry + text).split('\n\n');
          carry = events.pop() ?? '';
          for (const event of events) if (event.startsWith('data: ') && event !== 'data: [DONE]') chunks++;
        });
        res.on('end', () => {
          completed++;
          resolve();
        });
      });
      req.on('error', () => {
        failed++;
        resolve();
      });
      req.end(body);
    });
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: streams }, async () => {
      while (performance.now() < until) await once();
    }),
  );
  const elapsed = (performance.now() - begin) / 1000;
  agent.destroy();
  ttfb.sort((a, b) => a - b);
  return {
    chunksPerSecond: Math.round(chunks / elapsed),
    streamsPerSecond: Math.round(completed / elapsed),
    chunksPerStream: completed ? round(chunks / completed, 1) : 0,
    ttfbP50: round(percentile(ttfb, 50)),
    ttfbP99: round(percentile(ttfb, 99)),
    failed,
    load: load(),
  };
}

/** One buffered answer and one streamed answer, as the bare server will replay them. */
async function record(target: Target): Promise<{ json: string; stream: string[]; content: string }> {
  const call = async (payload: string) => {
    const res = await fetch(`${target.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' },
      body: payload,
    });
    if (res.status !== 200) throw new Error(`chat answered ${res.status}: ${await res.text()}`);
    return res.text();
  };
  const json = await call(BUFFERED);
  const stream = (await call(STREAMED))
    .split('\n\n')
    .filter((e) => e !== '')
    .map((e) => `${e}\n\n`);
  const content =
    (JSON.parse(json) as { choices: { message: { content: string } }[] }).choices[0]?.message.content ?? '';
  return { json, stream, content };
}

// --- the run -------------------------------------------------------------------------------

async function main() {
  const started = new Date();
  const before = load();
  console.log(`load before: ${before.join(' ')} on ${cpus().length} cores; work dir ${work}`);

  const ours = await startOurs();
  const recorded = await record(ours);
  await sleep(2000);
  const rest = rss(ours.child.pid).now;
  const bare = await startBare(recorded);
  const floors = args['no-floors']
    ? []
    : [await startExpress(recorded, false), await startExpress(recorded, true)];
  const litellm = await startLitellm(recorded.content);
  const relay = args.relay
    ? await startOurs(
        'relay',
        JSON.stringify({ default: { type: 'upstream', baseUrl: `${bare.url}/v1`, retries: 0 } }),
      )
    : undefined;
  const targets = [bare, ...floors, ours, ...(relay ? [relay] : []), ...(litellm ? [litellm] : [])];

  const throughput: Partial<Record<Target['name'], Throughput>> = {};
  let oursLoad = { peak: NaN, median: NaN };
  for (const target of targets) {
    console.log(`closed loop, ${CONNECTIONS} connections: ${target.name} (load ${load().join(' ')})`);
    await closedLoop(target, WARMUP);
    const measured = await underLoad(target.child.pid, () => closedLoop(target, DURATION));
    throughput[target.name] = measured.result;
    if (target === ours) oursLoad = { peak: measured.peak, median: measured.median };
  }

  const fixed: Partial<Record<Target['name'], FixedRate>> = {};
  for (const target of targets) {
    // A server that cannot reach the rate would only queue: its fixed-rate figure says nothing.
    if ((throughput[target.name]?.rps ?? 0) < RATE * 1.1) continue;
    console.log(`fixed rate ${RATE}/s: ${target.name} (load ${load().join(' ')})`);
    await fixedRate(target, RATE, WARMUP);
    fixed[target.name] = await fixedRate(target, RATE, RATE_DURATION);
  }

  const streamed: Partial<Record<Target['name'], Streaming>> = {};
  let oursStreamLoad = { peak: NaN, median: NaN };
  for (const target of targets) {
    console.log(`streaming, ${STREAMS} clients: ${target.name} (load ${load().join(' ')})`);
    await streaming(target, WARMUP);
    const measured = await underLoad(target.child.pid, () => streaming(target, DURATION));
    streamed[target.name] = measured.result;
    if (target === ours) oursStreamLoad = { peak: measured.peak, median: measured.median };
  }
  const after = load();
  const afterRest = rss(ours.child.pid).now;

  for (const target of targets) await stop(target.child);
  let profile: ReturnType<typeof summarize> | undefined;
  if (args.profile) {
    const dir = join(work, 'profile');
    const { readdirSync } = await import('node:fs');
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (file) {
      profile = summarize(
        JSON.parse(readFileSync(join(dir, file), 'utf8')) as Parameters<typeof summarize>[0],
        20,
      );
      mkdirSync(args.out, { recursive: true });
      writeFileSync(
        join(args.out, `model-${started.toISOString().slice(0, 10)}.cpuprofile`),
        readFileSync(join(dir, file)),
      );
    }
  }

  const ratio = (a?: number, b?: number) => (a && b ? Math.round((a / b) * 100) / 100 : NaN);
  const results = {
    date: started.toISOString(),
    command: [
      'npm run bench:model',
      ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : []),
    ].join(' '),
    node: process.version,
    cpu: `${cpus().length} x ${cpus()[0]?.model ?? '?'}`,
    load: { before, after },
    storage: args['database-url'] ? 'postgres' : 'pglite',
    settings: {
      duration: DURATION,
      warmup: WARMUP,
      connections: CONNECTIONS,
      rate: RATE,
      rateDuration: RATE_DURATION,
      rateConnections: RATE_CONNECTIONS,
      streams: STREAMS,
      streamTokens: STREAM_TOKENS,
    },
    throughput,
    ratios: {
      oursToBare: ratio(throughput.ours?.rps, throughput.bare?.rps),
      expressToBare: ratio(throughput.express?.rps, throughput.bare?.rps),
      expressValidatorToBare: ratio(throughput['express+validator']?.rps, throughput.bare?.rps),
      oursToLitellm: ratio(throughput.ours?.rps, throughput.litellm?.rps),
    },
    fixedRate: fixed,
    streaming: streamed,
    rssMiB: {
      rest,
      afterLoad: afterRest,
      bufferedPeak: oursLoad.peak,
      bufferedMedian: oursLoad.median,
      streamingPeak: oursStreamLoad.peak,
    },
    goals: {
      atLeast0_3xBare: ratio(throughput.ours?.rps, throughput.bare?.rps) >= 0.3,
      aheadOfLitellm: throughput.litellm ? (throughput.ours?.rps ?? 0) > throughput.litellm.rps : null,
      p99Under5msAt1000rps: fixed.ours ? fixed.ours.p99 < 5 : false,
    },
    ...(profile ? { profile } : {}),
  };

  const rows = targets.map((t) => {
    const b = throughput[t.name];
    const f = fixed[t.name];
    const s = streamed[t.name];
    return {
      server: t.name,
      'req/s': b?.rps,
      'mean ms': b?.mean,
      'p50 ms': b?.p50 === 0 ? '<1' : b?.p50,
      'p99 ms': b?.p99 === 0 ? '<1' : b?.p99,
      'non-2xx': b?.non2xx,
      'CPU ms/req': b?.cpuMsPerRequest,
      [`p99 ms @${RATE}/s`]: f?.p99 ?? '-',
      'chunks/s': s?.chunksPerSecond,
      'chunks/stream': s?.chunksPerStream,
      'TTFB p50 ms': s?.ttfbP50,
      'TTFB p99 ms': s?.ttfbP99,
    };
  });
  console.log();
  console.table(rows);
  console.log(
    `ours / bare throughput: ${results.ratios.oursToBare}; ours / LiteLLM: ${results.ratios.oursToLitellm}; ` +
      `Express / bare: ${results.ratios.expressToBare}; Express + validator / bare: ${results.ratios.expressValidatorToBare}`,
  );
  if (fixed.ours) console.log(`ours at ${RATE}/s (open loop): ${JSON.stringify(fixed.ours)}`);
  console.log(`RSS of ours (MiB): ${JSON.stringify(results.rssMiB)}`);
  console.log(`goals: ${JSON.stringify(results.goals)}`);
  console.log(`load before ${before.join(' ')}, after ${after.join(' ')}`);
  if (profile) {
    console.log(`\nprofile of ours: ${profile.busyMs} ms busy of ${profile.totalMs} ms sampled; by layer:`);
    for (const r of profile.layers) console.log(`${String(r.percent).padStart(5)}%  ${r.name}`);
    console.log('by package (share of all samples, idle included):');
    for (const r of profile.origins) console.log(`${String(r.percent).padStart(5)}%  ${r.name}`);
    console.log('top functions:');
    for (const r of profile.functions)
      console.log(`${String(r.percent).padStart(5)}%  ${r.name}  ${r.where}`);
  }
  const file = writeResult(
    args.out,
    `model-${started.toISOString().slice(0, 16).replace(/[T:]/g, '-')}.json`,
    results,
  );
  console.log(`\nwrote ${file}`);
}

try {
  await main();
} finally {
  await run.close();
}
