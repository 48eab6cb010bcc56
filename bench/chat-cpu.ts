// The CPU a buffered chat call costs the model API (issue 33, goal 2a), at a fixed rate well under
// saturation, so that the figure is the work of a call and not the queueing of a busy machine:
// our service as `npm start` runs it (bench/lib.ts startOurs), bench/model.ts's buffered body sent
// at `--rate` for `--seconds` after a warm-up, and the process's CPU time (and its main thread's)
// over the measured calls, from /proc. `--profile DIR` writes a V8 CPU profile of the main thread
// over the whole run (bench/profile-summary.ts reads it; pass the measured seconds as last-ms).
// Several `--runs` start the service once each. Compare builds by alternating runs of each
// (one worktree per build), since the machine's other load moves the figure.
// Not part of `npm test`.
//
//   node bench/chat-cpu.ts [--rate 500] [--seconds 20] [--warmup 5] [--runs 1] [--profile DIR] [--database-url URL]
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  benchRun,
  cpuMs,
  freePort,
  load,
  mainThreadCpuMs,
  NODE,
  round,
  sleep,
  startOurs,
  stop,
} from './lib.ts';

const { values: opts } = parseArgs({
  options: {
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '5' },
    runs: { type: 'string', default: '1' },
    profile: { type: 'string' },
    /** Measure the floor instead: Express + the OpenAPI validator answering ours' recorded bytes. */
    floor: { type: 'boolean', default: false },
    'database-url': { type: 'string' },
  },
});
const RATE = Number(opts.rate);
const SECONDS = Number(opts.seconds);
const WARMUP = Number(opts.warmup);

const BODY = Buffer.from(
  JSON.stringify({
    model: 'prince',
    messages: [{ role: 'user', content: 'Say hello in one short sentence.' }],
    max_tokens: 16,
  }),
);

/** `seconds` of calls at `RATE` (open loop, fixed pool of sockets); how many answered 200. */
async function send(target: URL, key: string, seconds: number): Promise<{ ok: number; failed: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const headers = {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    'content-length': String(BODY.length),
  };
  const total = Math.round(RATE * seconds);
  let ok = 0;
  let failed = 0;
  const begin = performance.now();
  await new Promise<void>((finish) => {
    let sent = 0;
    let done = 0;
    const settle = (good: boolean) => {
      if (good) ok++;
      else failed++;
      if (++done === total) finish();
    };
    const one = () => {
      const req = request(target, { method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => settle(res.statusCode === 200));
      });
      req.on('error', () => settle(false));
      req.end(BODY);
    };
    const tick = () => {
      const now = performance.now();
      for (; sent < total && begin + (sent * 1000) / RATE <= now; sent++) one();
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  agent.destroy();
  return { ok, failed };
}

/** CPU ms of each thread of a process, by the thread's name (`node`, `V8 Worker`, ...), summed. */
function threads(pid: number | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  if (pid === undefined) return out;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out[name] = (out[name] ?? 0) + ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      // gone
    }
  }
  return out;
}

/** bench/express-server.ts with the validator, answering what `ours` answered (then stopped). */
async function startFloor(
  run: ReturnType<typeof benchRun>,
  ours: Awaited<ReturnType<typeof startOurs>>,
  nodeFlags: string[],
): Promise<Awaited<ReturnType<typeof startOurs>>> {
  const answer = await fetch(`${ours.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ours.key}`, 'content-type': 'application/json' },
    body: BODY,
  });
  const file = join(run.work, 'recorded.json');
  writeFileSync(file, JSON.stringify({ json: await answer.text(), stream: [] }));
  await stop(ours.child);
  const port = await freePort();
  const child = run.start(
    NODE,
    [...nodeFlags, 'bench/express-server.ts'],
    { BENCH_BODY_FILE: file, PORT: String(port), BENCH_VALIDATOR: '1' },
    'floor.log',
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 400 && !readFileSync(join(run.work, 'floor.log'), 'utf8').includes('port'); i++)
    await sleep(50);
  return { url, key: 'sk-bench', child };
}

const results: {
  cpuMsPerCall: number;
  mainThreadMsPerCall: number;
  ok: number;
  failed: number;
  byThread: Record<string, number>;
}[] = [];
for (let r = 0; r < Number(opts.runs); r++) {
  const run = benchRun('chat-cpu');
  try {
    const nodeFlags = opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${opts.profile}`] : [];
    let ours = await startOurs(run, {
      name: 'ours',
      nodeFlags: opts.floor ? [] : nodeFlags,
      env: { DATABASE_URL: opts['database-url'] ?? '' },
    });
    if (opts.floor) ours = await startFloor(run, ours, nodeFlags);
    const target = new URL('/v1/chat/completions', ours.url);
    await send(target, ours.key, WARMUP);
    await sleep(500);
    const pid = ours.child.pid;
    const [cpu0, main0, threads0] = [cpuMs(pid), mainThreadCpuMs(pid), threads(pid)];
    const { ok, failed } = process.env.CHAT_CPU_IDLE
      ? (await sleep(SECONDS * 1000), { ok: SECONDS * RATE, failed: 0 })
      : await send(target, ours.key, SECONDS);
    const [cpu1, main1, threads1] = [cpuMs(pid), mainThreadCpuMs(pid), threads(pid)];
    const byThread = Object.fromEntries(
      Object.entries(threads1).map(([name, ms]) => [name, round((ms - (threads0[name] ?? 0)) / ok, 3)]),
    );
    const one = {
      cpuMsPerCall: round((cpu1 - cpu0) / ok, 3),
      mainThreadMsPerCall: round((main1 - main0) / ok, 3),
      ok,
      failed,
      byThread,
    };
    results.push(one);
    console.log(`run ${r + 1}: ${JSON.stringify(one)} load ${load().join(' ')}`);
  } finally {
    await run.close();
  }
}
if (results.length > 1) {
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    `median CPU ms a call ${median(results.map((x) => x.cpuMsPerCall))}, main thread ${median(results.map((x) => x.mainThreadMsPerCall))}`,
  );
}
