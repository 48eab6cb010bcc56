// The load generator of bench/directory.ts, in a process of its own (never the server's):
// autocannon against one URL origin, cycling through a fixed list of request paths, either
// closed-loop (`connections` clients back to back) or open-loop at `rate` requests per second.
// autocannon's rate sends each connection's share of a second back to back at the start of the
// second, then waits: a burst every second. With `paced`, requests are sent on an even schedule
// instead (request i is due at start + i / rate, whatever happened to the others) over a fixed
// pool of `connections` keep-alive sockets, and each latency counts from when the request was
// due, so a stall shows in it (no coordinated omission), as bench/model.ts measures its rate.
// Prints one JSON line: latency percentiles from every response's own time, requests/s, status
// counts.
//
//   node bench/load.ts '{"url":"http://127.0.0.1:8081","key":"sk_...","paths":["/v1/search?q=x"],"connections":4,"duration":15}'
import { Agent, request } from 'node:http';
import autocannon from 'autocannon';

interface LoadConfig {
  url: string;
  key: string;
  paths: string[];
  connections: number;
  duration: number;
  /** requests per second over all connections (open loop); unset: as fast as answered */
  rate?: number;
  /** with `rate`: an even schedule, latency from each request's due time (see above) */
  paced?: boolean;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** Open loop on an even schedule over a fixed pool of sockets (see the file's comment). */
async function paced(config: LoadConfig, latencies: number[], statuses: Record<string, number>) {
  const rate = config.rate ?? 1;
  const agent = new Agent({ keepAlive: true, maxSockets: config.connections });
  const total = Math.round(rate * config.duration);
  const origin = new URL(config.url);
  let sent = 0;
  let done = 0;
  let errors = 0;
  const begin = performance.now();
  await new Promise<void>((resolve) => {
    const finish = () => {
      if (++done === total) resolve();
    };
    const one = (due: number, path: string) => {
      const req = request(
        {
          agent,
          host: origin.hostname,
          port: origin.port,
          path,
          headers: { authorization: `Bearer ${config.key}` },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - due);
            statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
            finish();
          });
        },
      );
      req.setTimeout(30_000, () => req.destroy());
      req.on('error', () => {
        errors++;
        finish();
      });
      req.end();
    };
    const tick = () => {
      const now = performance.now();
      while (sent < total && begin + (sent * 1000) / rate <= now) {
        one(begin + (sent * 1000) / rate, config.paths[sent % config.paths.length]!);
        sent++;
      }
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  agent.destroy();
  return { seconds: (performance.now() - begin) / 1000, errors };
}

const config = JSON.parse(process.argv[2] ?? '{}') as LoadConfig;
const latencies: number[] = [];
const statuses: Record<string, number> = {};
if (config.paced && config.rate) {
  const run = await paced(config, latencies, statuses);
  latencies.sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 100) / 100;
  const out: LoadResult = {
    requests: latencies.length,
    rps: Math.round((latencies.length / run.seconds) * 10) / 10,
    p50: round(percentile(latencies, 50)),
    p95: round(percentile(latencies, 95)),
    p99: round(percentile(latencies, 99)),
    max: round(latencies.at(-1) ?? Number.NaN),
    statuses,
    errors: run.errors,
    timeouts: 0,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(0);
}
const started = performance.now();
const result = await new Promise<autocannon.Result>((resolveRun, rejectRun) => {
  const instance = autocannon(
    {
      url: config.url,
      connections: config.connections,
      duration: config.duration,
      ...(config.rate ? { overallRate: config.rate } : {}),
      headers: { authorization: `Bearer ${config.key}` },
      requests: config.paths.map((path) => ({ method: 'GET', path })),
      timeout: 30,
    },
    (err, res) => (err ? rejectRun(err as Error) : resolveRun(res)),
  );
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    latencies.push(responseTime);
    statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
  });
});
const seconds = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const out: LoadResult = {
  requests: latencies.length,
  rps: Math.round((latencies.length / Math.min(seconds, result.duration || seconds)) * 10) / 10,
  p50: percentile(latencies, 50),
  p95: percentile(latencies, 95),
  p99: percentile(latencies, 99),
  max: latencies.at(-1) ?? Number.NaN,
  statuses,
  errors: result.errors,
  timeouts: result.timeouts,
};
process.stdout.write(`${JSON.stringify(out)}\n`);
