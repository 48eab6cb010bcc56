// The load generator of bench/directory.ts, in a process of its own (never the server's):
// autocannon against one URL origin, cycling through a fixed list of request paths, either
// closed-loop (`connections` clients back to back) or open-loop at `rate` requests per second.
// Prints one JSON line: latency percentiles from every response's own time, requests/s, status
// counts.
//
//   node bench/load.ts '{"url":"http://127.0.0.1:8081","key":"sk_...","paths":["/v1/search?q=x"],"connections":4,"duration":15}'
import autocannon from 'autocannon';

interface LoadConfig {
  url: string;
  key: string;
  paths: string[];
  connections: number;
  duration: number;
  /** requests per second over all connections (open loop); unset: as fast as answered */
  rate?: number;
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

const config = JSON.parse(process.argv[2] ?? '{}') as LoadConfig;
const latencies: number[] = [];
const statuses: Record<string, number> = {};
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
