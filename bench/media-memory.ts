// Memory of the model API under the media requests that could blow it up (issue 19): 30 MB
// uploads to /v1/audio/transcriptions (over the 25 MB bound: refused with 413 as they stream in)
// and n=10 images as b64_json at the largest size (one answer of tens of MB). A measurement
// script, not a test: the server runs as its own process (`node src/main.ts model`, PGlite in
// memory, the built-in engines), this process makes the load and samples the server's resident
// set (VmRSS of /proc/<pid>/status) every 10 ms. Each scenario runs in rounds of concurrent
// requests; what it reports is the peak above the warm baseline, and the settled RSS after each
// round, whose growth over the rounds would show a leak. A last burst sends more n=10 requests at
// once than the painter's queue (64 images an instance) holds: those past it are refused (503
// engine_busy), which is what bounds the memory of images in flight.
// `npm run bench:media-memory -- [--uploads 24] [--upload-concurrency 4] [--images 6] [--image-concurrency 2] [--burst 12]`
// docs/benchmarks.md (Media memory) holds the figures.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, sleep, waitFor } from './lib.ts';

const { values: args } = parseArgs({
  options: {
    uploads: { type: 'string', default: '24' },
    'upload-concurrency': { type: 'string', default: '4' },
    images: { type: 'string', default: '6' },
    'image-concurrency': { type: 'string', default: '2' },
    /** n=10 requests sent at once, past the painter's queue of 64 images (0 leaves it out). */
    burst: { type: 'string', default: '12' },
    size: { type: 'string', default: '1792x1024' },
    out: { type: 'string', default: 'bench/results' },
  },
});
const UPLOADS = Number(args.uploads);
const UPLOAD_CONCURRENCY = Number(args['upload-concurrency']);
const IMAGES = Number(args.images);
const IMAGE_CONCURRENCY = Number(args['image-concurrency']);
const BURST = Number(args.burst);
const SIZE = args.size;
const KEY = `sk_bench_memory_${randomBytes(12).toString('hex')}`;
const MiB = 1024 * 1024;

const mib = (bytes: number) => Math.round((bytes / MiB) * 10) / 10;

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return kb * 1024;
}

/** Samples the server's RSS every 10 ms until stopped; the peak and the samples' count. */
function sampler(pid: number) {
  let peak = 0;
  let samples = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
    samples++;
  }, 10);
  return {
    stop() {
      clearInterval(timer);
      return { peak, samples };
    },
  };
}

async function startServer(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--max-semi-space-size=64', 'src/main.ts', 'model'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      MODEL_API_PORT: String(port),
      DATA_DIR: 'memory://',
      BOOTSTRAP_ADMIN_KEY: KEY,
      LOG_LEVEL: 'warn',
      MODEL_RATE_LIMIT_RPM: '1000000',
      MODEL_IMAGES_PER_MINUTE: '1000000',
      MODEL_AUDIO_SECONDS_PER_MINUTE: '1000000',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/readyz`, child, { seconds: 120 });
  return { child, url };
}

/** Waits until RSS stops falling (the collector has run), for the settled figure of a round. */
async function settled(pid: number): Promise<number> {
  let last = rssOf(pid);
  for (let i = 0; i < 20; i++) {
    await sleep(250);
    const now = rssOf(pid);
    if (Math.abs(now - last) < 2 * MiB) return now;
    last = now;
  }
  return last;
}

async function rounds(
  pid: number,
  total: number,
  concurrency: number,
  call: (i: number) => Promise<{ status: number; bytes: number }>,
) {
  const baseline = await settled(pid);
  const out: { round: number; peak_mib: number; settled_mib: number; statuses: number[]; ms: number }[] = [];
  let bytes = 0;
  for (let r = 0; r * concurrency < total; r++) {
    const watch = sampler(pid);
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: Math.min(concurrency, total - r * concurrency) }, (_, i) =>
        call(r * concurrency + i),
      ),
    );
    const ms = Math.round(performance.now() - started);
    const { peak } = watch.stop();
    bytes = Math.max(bytes, ...results.map((x) => x.bytes));
    const after = await settled(pid);
    out.push({
      round: r + 1,
      peak_mib: mib(peak),
      settled_mib: mib(after),
      statuses: results.map((x) => x.status),
      ms,
    });
    console.log(
      `  round ${r + 1}: peak ${mib(peak)} MiB (+${mib(peak - baseline)}), settled ${mib(after)} MiB, ${ms} ms, statuses ${results.map((x) => x.status).join(',')}`,
    );
  }
  const peak = Math.max(...out.map((o) => o.peak_mib));
  return {
    baseline_mib: mib(baseline),
    peak_mib: peak,
    peak_above_baseline_mib: Math.round((peak - mib(baseline)) * 10) / 10,
    settled_growth_mib: Math.round(((out.at(-1)?.settled_mib ?? 0) - (out[0]?.settled_mib ?? 0)) * 10) / 10,
    largest_answer_mib: mib(bytes),
    rounds: out,
  };
}

async function main(): Promise<void> {
  const { child, url } = await startServer();
  const pid = child.pid!;
  const auth = { authorization: `Bearer ${KEY}` };
  try {
    const result: Record<string, unknown> = {
      when: new Date().toISOString(),
      cpus: cpus().length,
      load_average_at_start: loadavg().map((l) => Math.round(l * 100) / 100),
      command: process.argv.slice(2).join(' '),
    };
    result.rss_ready_mib = mib(rssOf(pid));
    // warm up the paths measured: the painter threads, the multipart parser, the validator
    await fetch(`${url}/v1/images/generations`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'warm up', n: 2, size: SIZE, response_format: 'b64_json' }),
    }).then((r) => r.arrayBuffer());
    result.rss_warm_mib = mib(rssOf(pid));
    console.log(`server ready at ${result.rss_ready_mib} MiB, warm at ${result.rss_warm_mib} MiB`);

    // 30 MB uploads: RIFF header, then bytes; refused once 25 MB have streamed in
    const big = Buffer.alloc(30 * MiB, 1);
    big.write('RIFF', 0, 'latin1');
    const blob = new Blob([big]);
    console.log(`30 MB uploads: ${UPLOADS}, ${UPLOAD_CONCURRENCY} at once`);
    result.uploads_30mb = {
      requests: UPLOADS,
      concurrency: UPLOAD_CONCURRENCY,
      ...(await rounds(pid, UPLOADS, UPLOAD_CONCURRENCY, async () => {
        const form = new FormData();
        form.set('model', 'voice');
        form.set('file', blob, 'big.wav');
        const res = await fetch(`${url}/v1/audio/transcriptions`, {
          method: 'POST',
          headers: auth,
          body: form,
        });
        const text = await res.text();
        return { status: res.status, bytes: text.length };
      })),
    };

    // n=10 b64_json at the largest size
    console.log(`n=10 b64_json ${SIZE} png: ${IMAGES} requests, ${IMAGE_CONCURRENCY} at once`);
    result.images_n10_b64 = {
      requests: IMAGES,
      concurrency: IMAGE_CONCURRENCY,
      size: SIZE,
      ...(await rounds(pid, IMAGES, IMAGE_CONCURRENCY, async (i) => {
        const res = await fetch(`${url}/v1/images/generations`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({
            prompt: `A harbour town by the sea at sunset, boats and hills ${i}`,
            n: 10,
            size: SIZE,
            response_format: 'b64_json',
          }),
        });
        const body = await res.arrayBuffer();
        return { status: res.status, bytes: body.byteLength };
      })),
    };
    if (BURST > 0) {
      console.log(`burst: ${BURST} n=10 b64_json ${SIZE} requests at once`);
      result.images_n10_burst = {
        requests: BURST,
        concurrency: BURST,
        size: SIZE,
        ...(await rounds(pid, BURST, BURST, async (i) => {
          const res = await fetch(`${url}/v1/images/generations`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify({
              prompt: `Snowy mountains at night ${i}`,
              n: 10,
              size: SIZE,
              response_format: 'b64_json',
            }),
          });
          const body = await res.arrayBuffer();
          return { status: res.status, bytes: body.byteLength };
        })),
      };
    }
    result.load_average_at_end = loadavg().map((l) => Math.round(l * 100) / 100);
    mkdirSync(args.out, { recursive: true });
    const file = join(
      args.out,
      `media-memory-${new Date().toISOString().slice(0, 16).replace(/[:T]/g, '-')}.json`,
    );
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`written to ${file}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

await main();
