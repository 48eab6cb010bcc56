// `npm test`: every check and test, in parts that run side by side where they can, so that two
// cores stay busy (a serial chain left one idle most of the time):
//
//   1. generate:check                       (rewrites generated/, which everything after reads)
//      beside demo-cache                    (the test servers' demo directory, made once: each
//                                            PGlite start then copies it, ~2 s of CPU less)
//      and, from the start to its end, the Python venv the SDK suites use (python-venv)
//   2. at once: format:check, lint, typecheck (one after another)
//               schemathesis                (contract-tests/schemathesis/run.ts)
//               vitest, project `parallel`  (files side by side, three at a time)
//   3. vitest, project `alone`              (files that time themselves, with nothing beside them)
//
// Each part's output is written to test-results/logs/<part>.log and printed whole when the part
// ends, so parts do not interleave. Each part is a JUnit test case too (test-results/parts.xml),
// so a failed lint, or a runner that died before writing its report, counts as a failure in the
// summary, whose closing line ends the log. Exits 1 when any part failed. Schemathesis runs its
// light profile (contract-tests/schemathesis/run.ts); SCHEMATHESIS_FULL=1 runs its full one.
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GUIDES_DEMO_LISTINGS, TEST_DEMO_LISTINGS } from '../contract-tests/support/demo.ts';

const LOGS = 'test-results/logs';
const BIN = 'node_modules/.bin';

interface Result {
  name: string;
  ok: boolean;
  seconds: number;
  output: string;
}

const results: Result[] = [];
const stamp = () => new Date().toISOString().slice(11, 19);

/** Runs one part to its end; its output goes to its log and, whole, to ours when it ends. */
function part(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Result> {
  console.log(`[${stamp()}] ${name}: started`);
  const started = Date.now();
  const log = createWriteStream(join(LOGS, `${name}.log`));
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    const keep = (chunk: Buffer) => {
      chunks.push(chunk);
      log.write(chunk);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const finish = (ok: boolean, extra = '') => {
      log.end(extra);
      const output = Buffer.concat(chunks).toString('utf8') + extra;
      const result = { name, ok, seconds: Math.round((Date.now() - started) / 1000), output };
      results.push(result);
      console.log(`\n==== ${name}: ${ok ? 'passed' : 'FAILED'} in ${result.seconds} s ====`);
      process.stdout.write(output.endsWith('\n') || output === '' ? output : `${output}\n`);
      resolve(result);
    };
    child.once('error', (err) => finish(false, `\n${name}: could not start: ${err.message}\n`));
    child.once('close', (code, signal) =>
      finish(code === 0, code === 0 ? '' : `\n${name}: exited ${code ?? signal}\n`),
    );
  });
}

const npmRun = (script: string) => part(script, 'npm', ['run', '--silent', script]);

/** The checks, one after another (each needs a core of its own for a minute or two). */
async function checks(): Promise<void> {
  for (const script of ['format:check', 'lint', 'typecheck']) await npmRun(script);
}

const escape = (text: string) =>
  text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);

/** The parts as JUnit test cases, so that the summary counts a failed check or a runner that died. */
function partsReport(parts: Result[]): void {
  const failures = parts.filter((r) => !r.ok).length;
  const cases = parts.map((r) => {
    const tail = r.output.split('\n').slice(-60).join('\n');
    const failure = r.ok ? '' : `<failure message="${r.name} failed">${escape(tail)}</failure>`;
    return `  <testcase classname="parts" name="${r.name} exits 0" time="${r.seconds}">${failure}</testcase>`;
  });
  writeFileSync(
    'test-results/parts.xml',
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      `<testsuite name="parts" tests="${parts.length}" failures="${failures}" errors="0" skipped="0">`,
      ...cases,
      '</testsuite>',
      '',
    ].join('\n'),
  );
}

async function main(): Promise<number> {
  const began = Date.now();
  mkdirSync(LOGS, { recursive: true });
  // Every part starts Node processes by the hundred (vitest's workers, `node src/main.ts`
  // instances, schemathesis's servers), each compiling the same modules: with V8's code cached on
  // disk the later ones skip most of it (some 5% of a start's CPU, and the run is CPU-bound).
  process.env.NODE_COMPILE_CACHE ??= resolve('node_modules/.cache/node-compile');
  execFileSync(process.execPath, ['scripts/test-summary.ts', 'start']);
  // pip takes minutes on a fresh machine: begun now, the files that need the venv wait for it
  // (contract-tests/support/python.ts) instead of installing it within their start-up time
  const python = part('python-venv', process.execPath, ['contract-tests/support/python.ts']);
  await Promise.all([
    npmRun('generate:check'),
    // never fails: without its cache a start makes the listings, as before
    // (the guides' size is made by `npm ci` too: made here only if that install's failed)
    part('demo-cache', process.execPath, ['scripts/demo-cache.ts'], {
      DEMO_LISTINGS: `${TEST_DEMO_LISTINGS},${GUIDES_DEMO_LISTINGS}`,
    }),
  ]);
  const vitest = (project: string, report: string) =>
    part(`vitest-${project}`, join(BIN, 'vitest'), [
      'run',
      '--project',
      project,
      `--outputFile.junit=test-results/${report}`,
    ]);
  await Promise.all([
    checks(),
    part('schemathesis', process.execPath, ['contract-tests/schemathesis/run.ts']),
    vitest('parallel', 'vitest.xml'),
    python,
  ]);
  await vitest('alone', 'vitest-alone.xml');
  partsReport(results);

  console.log(`\n== parts (${Math.round((Date.now() - began) / 1000)} s in all) ==`);
  for (const r of results)
    console.log(`${r.name.padEnd(20)} ${r.ok ? 'passed' : 'FAILED'} ${String(r.seconds).padStart(6)} s`);
  const failed = results.filter((r) => !r.ok).map((r) => r.name);
  if (failed.length) console.log(`failed: ${failed.join(', ')} (logs in ${LOGS}/)`);
  // The summary's lines close the log (its closing line is what CI reads).
  const summary = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ['scripts/test-summary.ts'], { stdio: 'inherit' });
    child.once('close', (code) => resolve(code ?? 1));
  });
  return failed.length > 0 || summary !== 0 ? 1 : 0;
}

process.exitCode = await main();
