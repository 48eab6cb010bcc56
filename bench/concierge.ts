// The Concierge benchmark (issue 18): how many workflows one instance runs at once, and the
// workflow runtime's own overhead per workflow, the model's time and the waiting excluded.
//
// Both services start in this process (PGlite in memory, the reference engine without a latency
// profile), behind a measuring proxy in front of the Model API (MODEL_API_URL) that adds up the
// time each workflow's agent calls take (the agents runtime with its model steps and the hub's
// search: "the model's time" from the workflow's side). Briefs are `contact: false` (search,
// shortlist, compare), so no waiting for answers enters.
// Part one, one at a time: from the POST to the workflow seen `succeeded` (polled every 5 ms);
// the overhead is that wall time minus the agent calls: the HTTP of the brief, the job chain
// (four stage jobs claimed and settled), the reads, the stage transactions, the usage record and
// the webhook event. Part two, all at once: N briefs posted together; the most workflows seen
// `running` at the same time (sampled every 20 ms) and workflows completed per second.
// `npm run bench:concierge -- [--sequential 40] [--burst 200] [--listings 2000]`
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startInProcess } from './lib.ts';

const { values: args } = parseArgs({
  options: {
    sequential: { type: 'string', default: '40' },
    burst: { type: 'string', default: '200' },
    listings: { type: 'string', default: '2000' },
    out: { type: 'string', default: 'bench/results' },
  },
});
const KEY = 'sk_bench_concierge_0123456789abcdef01';
const round = (n: number, digits = 1) => Number(n.toFixed(digits));
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Forwards to the Model API and adds up, per workflow, the time its agent calls take. */
async function measuringProxy(target: () => string) {
  const agentMs = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let workflow = '';
      try {
        workflow =
          (JSON.parse(body.toString()) as { metadata?: { workflow_id?: string } }).metadata?.workflow_id ??
          '';
      } catch {
        // not JSON
      }
      const started = performance.now();
      void fetch(`${target()}${req.url ?? ''}`, {
        method: req.method ?? 'GET',
        headers: {
          authorization: String(req.headers.authorization ?? ''),
          'content-type': 'application/json',
        },
        ...(body.length > 0 ? { body } : {}),
      }).then(async (answer) => {
        const bytes = Buffer.from(await answer.arrayBuffer());
        agentMs.set(workflow, (agentMs.get(workflow) ?? 0) + performance.now() - started);
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(bytes);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    agentMs,
    close: () => server.close(),
  };
}

async function main(): Promise<void> {
  let modelUrl = '';
  const proxy = await measuringProxy(() => modelUrl);
  const running = await startInProcess(['model', 'directory'], KEY, {
    DEMO_LISTINGS: args.listings,
    MODEL_RATE_LIMIT_RPM: '100000000',
    MODEL_RATE_LIMIT_TPM: '100000000000',
    DIRECTORY_RATE_LIMIT_RPS: '100000',
    INBOUND_SMTP_PORT: 'off',
    MODEL_API_URL: proxy.url,
    SECRETS_ENCRYPTION_KEY: '5e'.repeat(32),
  });
  await running.ready;
  modelUrl = running.urls.model ?? '';
  const directory = running.urls.directory ?? '';
  const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
  await fetch(`${modelUrl}/v1/subscriptions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ plan: 'concierge' }),
  });
  // the city with the most listings of one trade: the briefs ask for those
  const [target] = await running.platform.db.query<{ city: string; code: string; n: number }>(
    `select profile->'address'->>'city' as city, a->>'code' as code, count(*)::int as n
       from listings, jsonb_array_elements(profile->'activities') a
      group by 1, 2 order by 3 desc limit 1`,
  );
  const brief = {
    brief: `Find three providers in ${target?.city ?? 'Wien'} and compare them.`,
    activity: target?.code ?? '43.22',
    location: target?.city ?? 'Wien',
    contact: false,
  };
  const post = async () => {
    const res = await fetch(`${directory}/v1/concierge/briefs`, {
      method: 'POST',
      headers,
      body: JSON.stringify(brief),
    });
    if (res.status !== 202) throw new Error(`brief refused: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  };
  const status = async (id: string) =>
    (
      (await (await fetch(`${directory}/v1/concierge/workflows/${id}`, { headers })).json()) as {
        status: string;
      }
    ).status;

  // warm-up: the runtime key, the caches, the JIT
  for (let i = 0; i < 5; i++) {
    const id = await post();
    while (!['succeeded', 'failed'].includes(await status(id))) await new Promise((r) => setTimeout(r, 5));
  }

  const walls: number[] = [];
  const agents: number[] = [];
  const overheads: number[] = [];
  for (let i = 0; i < Number(args.sequential); i++) {
    const t = performance.now();
    const id = await post();
    let s = '';
    while (!['succeeded', 'failed'].includes((s = await status(id))))
      await new Promise((r) => setTimeout(r, 5));
    if (s !== 'succeeded') throw new Error(`workflow ${id} ${s}`);
    const wall = performance.now() - t;
    const agent = proxy.agentMs.get(id) ?? 0;
    walls.push(wall);
    agents.push(agent);
    overheads.push(wall - agent);
  }
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const sequential = {
    workflows: walls.length,
    wall_ms: { p50: round(percentile(sorted(walls), 50)), p95: round(percentile(sorted(walls), 95)) },
    agent_ms: { p50: round(percentile(sorted(agents), 50)), p95: round(percentile(sorted(agents), 95)) },
    overhead_ms: {
      p50: round(percentile(sorted(overheads), 50)),
      p95: round(percentile(sorted(overheads), 95)),
    },
  };
  console.log('one at a time', JSON.stringify(sequential));

  const n = Number(args.burst);
  let most = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const [row] = await running.platform.db.query<{ n: number }>(
        `select count(*)::int as n from concierge_workflows where status = 'running'`,
      );
      most = Math.max(most, row?.n ?? 0);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const started = performance.now();
  const ids = await Promise.all(Array.from({ length: n }, post));
  for (;;) {
    const [row] = await running.platform.db.query<{ n: number }>(
      `select count(*)::int as n from concierge_workflows where id = any($1) and status in ('succeeded', 'failed')`,
      [ids],
    );
    if ((row?.n ?? 0) >= n) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (performance.now() - started) / 1000;
  sampling = false;
  await sampler;
  const [failed] = await running.platform.db.query<{ n: number }>(
    `select count(*)::int as n from concierge_workflows where id = any($1) and status = 'failed'`,
    [ids],
  );
  const burst = {
    workflows: n,
    failed: failed?.n ?? 0,
    seconds: round(seconds, 2),
    workflows_per_second: round(n / seconds, 1),
    most_running_at_once: most,
  };
  console.log('all at once', JSON.stringify(burst));

  const meta = {
    date: new Date().toISOString(),
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    loadavg: loadavg(),
    listings: Number(args.listings),
    job_workers: running.platform.config.jobWorkers,
    brief,
  };
  mkdirSync(args.out ?? 'bench/results', { recursive: true });
  const file = join(
    args.out ?? 'bench/results',
    `concierge-${meta.date.slice(0, 16).replace(/[:T]/g, '-')}.json`,
  );
  writeFileSync(file, `${JSON.stringify({ meta, sequential, burst }, null, 2)}\n`);
  console.log(`wrote ${file}`);
  await running.close();
  proxy.close();
}

await main();
