// Two builds of the model API measured side by side (issue 33, goal 2a): each worktree's service
// as `npm start` runs it, both sent bench/model.ts's buffered chat body at `--rate` each, the
// calls of the two interleaved, and each process's CPU a call (main thread and whole process,
// from /proc) over `--windows` windows. On a busy machine the other load moves both alike, so
// the ratio of a window holds where alternated runs of bench/chat-cpu.ts scatter by ±10 %.
// Not part of `npm test`.
//
//   node bench/chat-cpu-pair.ts --base /work/wt-before --after /work/wt-after [--rate 400] [--windows 6] [--seconds 10]
import { Agent, request } from 'node:http';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type * as LibModule from './lib.ts';

const { values: opts } = parseArgs({
  options: {
    base: { type: 'string' },
    after: { type: 'string' },
    rate: { type: 'string', default: '400' },
    windows: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '10' },
  },
});
if (!opts.base || !opts.after) throw new Error('--base DIR and --after DIR (worktrees of the two builds)');
const RATE = Number(opts.rate);
const WINDOWS = Number(opts.windows);
const SECONDS = Number(opts.seconds);

type Lib = typeof LibModule;
// each build's own start-up code, so that each service runs from its own worktree
const libs = (await Promise.all(
  [opts.base, opts.after].map((dir) => import(resolve(dir, 'bench/lib.ts'))),
)) as [Lib, Lib];
const [lib] = libs;

const BODY = Buffer.from(
  JSON.stringify({
    model: 'prince',
    messages: [{ role: 'user', content: 'Say hello in one short sentence.' }],
    max_tokens: 16,
  }),
);

const runs = libs.map((l, i) => l.benchRun(i === 0 ? 'pair-base' : 'pair-after'));
try {
  const servers = [];
  for (const [i, l] of libs.entries()) servers.push(await l.startOurs(runs[i]!, { name: 'ours' }));
  const targets = servers.map((s) => ({
    pid: s.child.pid,
    url: new URL('/v1/chat/completions', s.url),
    agent: new Agent({ keepAlive: true, maxSockets: 16 }),
    headers: {
      authorization: `Bearer ${s.key}`,
      'content-type': 'application/json',
      'content-length': String(BODY.length),
    },
  }));

  /** `seconds` of calls to both at RATE each, the two in turn; the 200s each answered. */
  const send = (seconds: number) =>
    new Promise<number[]>((finish) => {
      const total = Math.round(RATE * seconds);
      const ok = [0, 0];
      let done = 0;
      let sent = 0;
      const settle = () => {
        if (++done === 2 * total) finish(ok);
      };
      const one = (i: number) => {
        const t = targets[i]!;
        const req = request(t.url, { method: 'POST', agent: t.agent, headers: t.headers }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) ok[i]!++;
            settle();
          });
        });
        req.on('error', settle);
        req.end(BODY);
      };
      const begin = performance.now();
      const tick = () => {
        const now = performance.now();
        for (; sent < total && begin + (sent * 1000) / RATE <= now; sent++) {
          one(sent % 2);
          one(1 - (sent % 2));
        }
        if (sent < total) setTimeout(tick, 1);
      };
      tick();
    });

  await send(5); // warm-up
  const sums = [0, 0, 0, 0];
  for (let w = 0; w < WINDOWS; w++) {
    const before = targets.map((t) => [lib.mainThreadCpuMs(t.pid), lib.cpuMs(t.pid)]);
    const ok = await send(SECONDS);
    const per = targets.map((t, i) => [
      (lib.mainThreadCpuMs(t.pid) - before[i]![0]!) / ok[i]!,
      (lib.cpuMs(t.pid) - before[i]![1]!) / ok[i]!,
    ]);
    const [b, a] = per as [number[], number[]];
    sums[0]! += b[0]!;
    sums[1]! += a[0]!;
    sums[2]! += b[1]!;
    sums[3]! += a[1]!;
    console.log(
      `window ${w + 1}: main thread ${b[0]!.toFixed(3)} / ${a[0]!.toFixed(3)} ms a call (x${(a[0]! / b[0]!).toFixed(3)}), ` +
        `process ${b[1]!.toFixed(3)} / ${a[1]!.toFixed(3)} (x${(a[1]! / b[1]!).toFixed(3)}), load ${lib.load().join(' ')}`,
    );
  }
  const mean = sums.map((s) => s / WINDOWS) as [number, number, number, number];
  console.log(
    `base / after, CPU ms a call: main thread ${mean[0].toFixed(3)} / ${mean[1].toFixed(3)} (x${(mean[1] / mean[0]).toFixed(3)}), ` +
      `process ${mean[2].toFixed(3)} / ${mean[3].toFixed(3)} (x${(mean[3] / mean[2]).toFixed(3)})`,
  );
} finally {
  for (const run of runs) await run.close();
}
