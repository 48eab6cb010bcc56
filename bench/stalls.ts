// Where the model API's worst latencies fall in time (issue 33): buffered chat calls at a fixed
// rate (open loop, latency from the due time, as bench/model.ts sends them) for a while, and for
// each second of it the p50, p99 and worst call, with the second's place in the status prober's
// 30 s slot (a round starts 5 s into it: src/status/status.ts). A stall that comes back at the
// same place every slot is the prober's; one anywhere else is something else (GC, the machine).
// Not part of `npm test`.
//
//   node bench/stalls.ts [--rate 400] [--seconds 65] [--database-url URL] [--out bench/results]
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { benchRun, load, round, startOurs, writeResult } from './lib.ts';

const { values: opts } = parseArgs({
  options: {
    rate: { type: 'string', default: '400' },
    seconds: { type: 'string', default: '65' },
    'database-url': { type: 'string' },
    out: { type: 'string' },
  },
});
const RATE = Number(opts.rate);
const SECONDS = Number(opts.seconds);
const SLOT_S = 30;

const run = benchRun('stalls');
try {
  const ours = await startOurs(run, { name: 'ours', env: { DATABASE_URL: opts['database-url'] ?? '' } });
  const body = JSON.stringify({
    model: 'prince',
    messages: [{ role: 'user', content: 'Say hello in one short sentence.' }],
    max_tokens: 16,
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const url = new URL('/v1/chat/completions', ours.url);
  const headers = {
    authorization: `Bearer ${ours.key}`,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  };
  const total = RATE * SECONDS;
  const latency = new Float64Array(total).fill(Number.NaN);
  const loadBefore = load();
  const begin = performance.now();
  const wallBegin = Date.now();
  await new Promise<void>((finish) => {
    let sent = 0;
    let done = 0;
    const one = (i: number, due: number) => {
      const settle = (ok: boolean) => {
        if (ok) latency[i] = performance.now() - due;
        if (++done === total) finish();
      };
      const req = request(url, { method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => settle(res.statusCode === 200));
      });
      req.on('error', () => settle(false));
      req.end(body);
    };
    const tick = () => {
      const now = performance.now();
      for (; sent < total && begin + (sent * 1000) / RATE <= now; sent++)
        one(sent, begin + (sent * 1000) / RATE);
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  agent.destroy();
  const seconds: { at: string; slotSecond: number; ok: number; p50: number; p99: number; max: number }[] = [];
  for (let s = 0; s < SECONDS; s++) {
    const calls = Array.from(latency.subarray(s * RATE, (s + 1) * RATE)).filter((x) => !Number.isNaN(x));
    calls.sort((a, b) => a - b);
    const at = (p: number) =>
      round(calls[Math.min(calls.length - 1, Math.floor(p * calls.length))] ?? Number.NaN);
    const wall = wallBegin + s * 1000;
    seconds.push({
      at: new Date(wall).toISOString().slice(11, 19),
      slotSecond: Math.floor(wall / 1000) % SLOT_S,
      ok: calls.length,
      p50: at(0.5),
      p99: at(0.99),
      max: round(calls.at(-1) ?? Number.NaN),
    });
  }
  for (const s of seconds)
    console.log(
      `${s.at} slot+${String(s.slotSecond).padStart(2)}s  ok ${s.ok}  p50 ${s.p50}  p99 ${s.p99}  max ${s.max}`,
    );
  // the worst call of each place in the slot, over every slot the run saw
  const bySlot = Array.from({ length: SLOT_S }, (_, i) =>
    Math.max(...seconds.filter((s) => s.slotSecond === i).map((s) => s.max), 0),
  );
  console.log('worst call by second of the slot (ms):', bySlot.join(' '));
  if (opts.out) {
    const file = writeResult(
      opts.out,
      `stalls-${new Date().toISOString().slice(0, 16).replace(/[T:]/g, '-')}.json`,
      {
        date: new Date().toISOString(),
        command: `node bench/stalls.ts ${process.argv.slice(2).join(' ')}`.trim(),
        rate: RATE,
        load: { before: loadBefore, after: load() },
        bySlot,
        seconds,
      },
    );
    console.log(`wrote ${file}`);
  }
} finally {
  await run.close();
}
