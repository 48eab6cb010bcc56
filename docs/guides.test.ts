// Every guide's code runs as written: the shell, TypeScript, JavaScript and Python blocks of
// README.md and docs/*.md are taken from the page and run, in order, against both services
// started on free ports with the demo directory `npm start` loads. Each guide runs in a folder
// of its own that looks like the repository root (the guides say to run from there), as a
// reader's shell would: exported variables carry from block to block, quickstart.md first, and
// the others start from where it leaves the reader (its `MODEL_API`, `DIRECTORY_API`,
// `API_KEY`). Only addresses change: the guides' ports become the test's. A block's output is
// compared with the one the guide shows under it, and ids the guide shows are replaced in later
// blocks by the ones this run printed, as a reader copies them. Blocks marked
// `*Not run by the docs test: ...*` are counted and reported, never run.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Block, isRunnable, matchOutput, parseGuide } from '../contract-tests/support/guides.ts';
import { GUIDES_DEMO_LISTINGS } from '../contract-tests/support/demo.ts';
import { freePort } from '../contract-tests/support/processes.ts';
import { ensureVenv } from '../contract-tests/support/python.ts';
import { startTestServers, type TestServers } from '../contract-tests/support/server.ts';
import { usableDemoCache } from '../src/demo-cache.ts';

const ROOT = resolve('.');
/** Guides in reading order: quickstart.md first, the others start from what it exported. */
const GUIDES = [
  'docs/quickstart.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md') && f !== 'quickstart.md')
    .sort()
    .map((f) => `docs/${f}`),
  'README.md',
].filter((g) => !process.env.DOCS_GUIDES || process.env.DOCS_GUIDES.split(',').includes(g));
const BLOCK_TIMEOUT_MS = 90_000;
/** The Python venv (pip, minutes on a fresh machine, maybe waiting for another file's) and then
 * the services with 20,000 listings beside other files' load. */
const START_TIMEOUT_MS = 900_000;

interface Ports {
  inbound: number;
  sink: number;
  dns: number;
  /** The guides' receivers on 3000, 3001 and 4000. */
  receivers: Record<string, number>;
}

let servers: TestServers;
/** What the guides' start lines set, on the test's ports. */
const SERVICES_ENV = (): Record<string, string> => ({
  OUTBOUND_ALLOW_PRIVATE: 'true',
  SMTP_URL: `smtp://127.0.0.1:${ports.sink}`,
  DNS_SERVERS: `127.0.0.1:${ports.dns}`,
});
let ports: Ports;
/** The guides' folders, one each. */
let work = '';
const report: {
  guide: string;
  ran: number;
  outputs: number;
  notRun: { line: number; why: string }[];
  passed: boolean;
}[] = [];
let baseEnv: Record<string, string> = {};

async function startAll(): Promise<void> {
  ports = {
    inbound: await freePort(),
    sink: await freePort(),
    dns: await freePort(),
    receivers: { '3000': await freePort(), '3001': await freePort(), '4000': await freePort() },
  };
  const began = Date.now();
  ensureVenv('.venv-python', 'contract-tests/python/requirements.txt');
  const venvSeconds = Math.round((Date.now() - began) / 1000);
  const listings = process.env.DOCS_DEMO_LISTINGS ?? GUIDES_DEMO_LISTINGS;
  // without the demo cache (npm ci's, or npm test's demo-cache part) the start makes 20,000 rows:
  // minutes beside other files
  const cache = usableDemoCache({ databaseUrl: undefined, demoListings: Number(listings) });
  console.log(
    `docs test: ${cache ? `the demo cache ${basename(cache)}` : 'no demo cache: the listings are made'}`,
  );
  servers = await startTestServers('pglite', {
    env: {
      DEMO_LISTINGS: listings, // what `npm start` loads: the guides' searches find what they say on it
      ...SERVICES_ENV(),
      INBOUND_SMTP_PORT: String(ports.inbound),
    },
    // 20,000 listings beside other files' load: minutes, not startTestServers' usual 180 s; what
    // the venv left of the hook's time, so a slow start says so rather than the hook timing out
    readyTimeoutMs: Math.max(120_000, START_TIMEOUT_MS - (Date.now() - began) - 30_000),
  });
  console.log(
    `docs test: python venv ready in ${venvSeconds} s, services in ${Math.round((Date.now() - began) / 1000) - venvSeconds} s`,
  );
  work = mkdtempSync(join(tmpdir(), 'docs-guides-'));
  // the reader's shell: the system's node (20 here), the venv's python; npm scripts and npx use
  // the repository's Node 24 themselves
  const path = (process.env.PATH ?? '')
    .split(':')
    .filter((p) => !p.includes('node_modules'))
    .join(':');
  baseEnv = {
    PATH: `${resolve('.venv-python/bin')}:${path}`,
    HOME: process.env.HOME ?? '/root',
    LANG: 'C.UTF-8',
    PYTHONUNBUFFERED: '1',
    PORT: String(ports.receivers['3000']), // the receivers' default
    BOOTSTRAP_ADMIN_KEY: servers.adminKey,
    // a clock moved for the whole run (libfaketime) moves the reader's too, as a machine's would
    ...Object.fromEntries(
      ['LD_PRELOAD', 'FAKETIME', 'DONT_FAKE_MONOTONIC'].flatMap((k) =>
        process.env[k] ? [[k, process.env[k]]] : [],
      ),
    ),
  };
}

async function stopAll(): Promise<void> {
  await servers?.stop();
  // kept when a guide failed, to read what its blocks wrote (block-<line>.out, beside each script)
  if (work && report.every((r) => r.passed)) rmSync(work, { recursive: true, force: true });
  else if (work) console.log(`docs test: the guides' folders are kept in ${work}`);
  const lines = ['docs test: blocks run and marked not runnable, per guide'];
  for (const r of report) {
    lines.push(`  ${r.guide}: ${r.ran} run (${r.outputs} outputs compared), ${r.notRun.length} not run`);
    for (const n of r.notRun) lines.push(`    line ${n.line}: ${n.why}`);
  }
  const total = report.reduce((n, r) => n + r.notRun.length, 0);
  lines.push(`  ${report.reduce((n, r) => n + r.ran, 0)} blocks run, ${total} marked not runnable`);
  console.log(lines.join('\n'));
  mkdirSync('test-results/docs-guides', { recursive: true });
  writeFileSync('test-results/docs-guides/blocks.json', JSON.stringify(report, null, 2));
}

/** The guide's addresses and ports made the test's. */
function rewrite(code: string): string {
  const model = new URL(servers.urls.model!).port;
  const directory = new URL(servers.urls.directory!).port;
  return code
    .replace(/\b(localhost|127\.0\.0\.1):8080\b/g, `127.0.0.1:${model}`)
    .replace(/\b(localhost|127\.0\.0\.1):8081\b/g, `127.0.0.1:${directory}`)
    .replace(/\b(localhost|127\.0\.0\.1):2525\b/g, `127.0.0.1:${ports.inbound}`)
    .replace(/\b(localhost|127\.0\.0\.1):1025\b/g, `127.0.0.1:${ports.sink}`)
    .replace(/\b(localhost|127\.0\.0\.1):5353\b/g, `127.0.0.1:${ports.dns}`)
    .replace(
      /\b(localhost|127\.0\.0\.1):(3000|3001|4000)\b/g,
      (_, _host, port: string) => `127.0.0.1:${ports.receivers[port]}`,
    )
    .replace(/\bPORT=(3000|3001|4000)\b/g, (_, port: string) => `PORT=${ports.receivers[port]}`)
    .replace(/npm run mail:sink\b/g, `npm run mail:sink -- --port ${ports.sink}`)
    .replace(/npm run (--silent )?dns:local\b/g, `npm run $1dns:local -- --port ${ports.dns}`);
}

/** A folder that looks like the repository root, for one guide. */
function sandbox(guide: string): string {
  const dir = join(work, basename(guide, '.md'));
  mkdirSync(dir, { recursive: true });
  for (const entry of [
    'node_modules',
    'generated',
    'src',
    'scripts',
    'bench',
    'spec',
    'package.json',
    'tsconfig.json',
  ]) {
    if (!existsSync(join(dir, entry))) symlinkSync(join(ROOT, entry), join(dir, entry));
  }
  return dir;
}

interface Run {
  stdout: string;
  stderr: string;
  code: number | null;
}

class Session {
  readonly dir: string;
  readonly envFile: string;
  readonly substitutions = new Map<string, string>();
  readonly children: ChildProcess[] = [];

  constructor(guide: string, env: Record<string, string>) {
    this.dir = sandbox(guide);
    this.envFile = join(this.dir, '.docs-test-env');
    writeFileSync(
      this.envFile,
      Object.entries(env)
        .map(([k, v]) => `export ${k}=${shellQuote(v)}`)
        .join('\n'),
    );
  }

  /** The variables the guide's shell has exported so far. */
  exported(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const line of readFileSync(this.envFile, 'utf8').split('\n')) {
      const m = /^(?:declare -x|export) ([A-Za-z_][A-Za-z0-9_]*)="?(.*?)"?$/.exec(line);
      if (m) out[m[1]!] = m[2]!.replace(/\\(["\\$`])/g, '$1');
    }
    return out;
  }

  code(block: Block): string {
    let code = block.code;
    for (const [shown, actual] of this.substitutions) code = code.split(shown).join(actual);
    return rewrite(code);
  }

  async run(block: Block, timeoutMs: number): Promise<Run> {
    const code = this.code(block);
    const name = block.file ?? `block-${block.line}`;
    if (block.lang === 'sh' || block.lang === 'bash') {
      const script = join(this.dir, `${name}.sh`);
      writeFileSync(
        script,
        `set -eo pipefail\nsource ${shellQuote(this.envFile)}\ntrap '{ export -p; declare -f; } > ${shellQuote(this.envFile)}' EXIT\n${code}`,
      );
      const server = /runs until/.test(code.split('\n')[0] ?? '');
      return this.spawn('bash', [script], server, timeoutMs);
    }
    // programs: saved under their own name for a later block, else run as the guide says
    const ext = { ts: '.ts', js: '.mjs', python: '.py' }[block.lang as 'ts' | 'js' | 'python'];
    const file = block.file ?? `${name}${ext}`;
    writeFileSync(join(this.dir, file), code);
    if (block.file) return { stdout: '', stderr: '', code: 0 };
    const command =
      block.lang === 'ts' ? `npx tsx ${file}` : block.lang === 'js' ? `node ${file}` : `python3 ${file}`;
    const script = join(this.dir, `${name}.run.sh`);
    writeFileSync(script, `set -eo pipefail\nsource ${shellQuote(this.envFile)}\n${command}\n`);
    return this.spawn('bash', [script], false, timeoutMs);
  }

  spawn(command: string, args: string[], server: boolean, timeoutMs: number): Promise<Run> {
    const child = spawn(command, args, {
      cwd: this.dir,
      env: baseEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: background jobs are ended with it
    });
    this.children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    return new Promise((resolvePromise) => {
      if (server) {
        // a server: running once it printed something (its address), or after 20 s
        const started = Date.now();
        const poll = setInterval(() => {
          if (stdout !== '' || stderr !== '' || child.exitCode !== null || Date.now() - started > 20_000) {
            clearInterval(poll);
            setTimeout(() => resolvePromise({ stdout, stderr, code: child.exitCode }), 300);
          }
        }, 50);
        return;
      }
      const timer = setTimeout(() => {
        stderr += `\n(timed out after ${timeoutMs} ms)`;
        kill(child);
      }, timeoutMs);
      child.once('exit', (code) => {
        clearTimeout(timer);
        // background jobs may keep the pipes open: take what came within a moment
        setTimeout(() => resolvePromise({ stdout, stderr, code }), 200);
      });
    });
  }

  close(): void {
    for (const child of this.children) kill(child);
  }
}

function kill(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** An error envelope in what a block printed, when its guide shows none. */
function printedError(printed: string, block: Block): string | undefined {
  if (block.output && /"error"/.test(block.output.code)) return undefined;
  const m = /\{\s*"error"\s*:\s*\{\s*"type"\s*:\s*"[a-z_]+"[^\n]*/.exec(printed);
  return m?.[0];
}

describe('every code block of every guide runs as written', () => {
  beforeAll(startAll, START_TIMEOUT_MS);
  afterAll(stopAll);
  for (const guide of GUIDES) {
    it(`${guide}`, { timeout: 600_000 }, async () => {
      const blocks = parseGuide(guide);
      const entry = {
        guide,
        ran: 0,
        outputs: 0,
        notRun: [] as { line: number; why: string }[],
        passed: false,
      };
      report.push(entry);
      const session = new Session(
        guide,
        guide === 'docs/quickstart.md' ? baseEnvForQuickstart() : quickstartExports,
      );
      const problems: string[] = [];
      try {
        for (const block of blocks) {
          if (!isRunnable(block.lang)) continue;
          if (block.notRun) {
            entry.notRun.push({ line: block.line, why: block.notRun });
            // the settings a start line gives are the ones the test started the services with
            if (/starts the services/.test(block.notRun)) {
              for (const m of rewrite(block.code).matchAll(
                /\b([A-Z][A-Z0-9_]+)=(\S+)(?= [^\n]*npm start)/g,
              )) {
                if (m[1] === 'BOOTSTRAP_ADMIN_KEY') continue;
                if (SERVICES_ENV()[m[1]!] !== m[2]) {
                  problems.push(
                    `${guide}:${block.line} starts the services with ${m[1]}=${m[2]}, the test with ${SERVICES_ENV()[m[1]!]}`,
                  );
                }
              }
            }
            continue;
          }
          const where = `${guide}:${block.line}`;
          const result = await session.run(block, BLOCK_TIMEOUT_MS);
          entry.ran++;
          writeFileSync(join(session.dir, `block-${block.line}.out`), result.stdout + result.stderr);
          const printed = result.stdout;
          const server = block.lang === 'sh' && /runs until/.test(block.code.split('\n')[0] ?? '');
          if (server ? result.code !== null : result.code !== 0) {
            problems.push(
              `${where} exited ${result.code}\n${result.stderr.slice(-2000)}\n${printed.slice(-1000)}`,
            );
            break; // later blocks depend on this one
          }
          const error = printedError(printed, block);
          if (error) problems.push(`${where} printed an error the guide does not show: ${error}`);
          if (block.output) {
            entry.outputs++;
            const match = matchOutput(block.output, printed);
            for (const [shown, actual] of match.substitutions) session.substitutions.set(shown, actual);
            if (match.problems.length) {
              problems.push(
                `${where}: the output differs from the guide's (line ${block.output.line}):\n  ${match.problems.slice(0, 8).join('\n  ')}`,
              );
            }
          }
        }
        if (guide === 'docs/quickstart.md') {
          const shellOwn = [
            'PATH',
            'HOME',
            'PWD',
            'OLDPWD',
            'SHLVL',
            'LANG',
            'PYTHONUNBUFFERED',
            'PORT',
            '_',
          ];
          quickstartExports = Object.fromEntries(
            Object.entries(session.exported()).filter(([k]) => !shellOwn.includes(k)),
          );
        }
      } finally {
        session.close();
      }
      entry.passed = problems.length === 0;
      expect(problems, problems.join('\n\n')).toEqual([]);
    });
  }
});

let quickstartExports: Record<string, string> = {};

function baseEnvForQuickstart(): Record<string, string> {
  return { BOOTSTRAP_ADMIN_KEY: servers.adminKey };
}

describe('what the guides state matches the services', () => {
  it('marks blocks it does not run with the one visible line, right above them', () => {
    const stray: string[] = [];
    for (const guide of GUIDES) {
      const lines = readFileSync(guide, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (!line.includes('Not run by the docs test') || line.includes('`*Not run')) return; // quoted
        let next = i + 1;
        while (lines[next]?.trim() === '') next++;
        if (
          !/^\s*\*Not run by the docs test: .+\*\s*$/.test(line) ||
          !/^\s*```(sh|bash|ts|js|python)\s*$/.test(lines[next] ?? '')
        )
          stray.push(`${guide}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(stray).toEqual([]);
  });

  it('docs/errors.md lists only error codes the services raise', () => {
    const guide = readFileSync('docs/errors.md', 'utf8');
    const table = guide.slice(guide.indexOf('## Codes'), guide.indexOf('## What to do per status'));
    const codes = new Set<string>();
    for (const row of table.split('\n').filter((l) => /^\| \d{3} \|/.test(l))) {
      const cell = row.split('|')[2] ?? '';
      for (const m of cell.matchAll(/`([a-z][a-z0-9_]*)`/g)) codes.add(m[1]!);
    }
    expect(codes.size).toBeGreaterThan(40);
    const source = sourceText('src');
    const unknown = [...codes].filter((c) => !source.includes(`'${c}'`) && !source.includes(`"${c}"`));
    expect(unknown, 'codes docs/errors.md lists that no file of src/ raises').toEqual([]);
  });

  it("docs/authentication.md's scope tables are the specs' security requirements", () => {
    const guide = readFileSync('docs/authentication.md', 'utf8');
    const section = guide.slice(
      guide.indexOf('### Which operation needs which scope'),
      guide.indexOf('## Managing keys'),
    );
    const [model, directory] = section.split('Directory API').map((part) => documented(part));
    for (const [api, table] of [
      ['model', model!],
      ['directory', directory!],
    ] as const) {
      const spec = JSON.parse(readFileSync(`generated/${api}/openapi.json`, 'utf8')) as {
        security?: Record<string, string[]>[];
        paths: Record<
          string,
          Record<string, { operationId?: string; security?: Record<string, string[]>[] }>
        >;
      };
      const expected = new Map<string, string>();
      for (const [path, item] of Object.entries(spec.paths)) {
        for (const [method, op] of Object.entries(item)) {
          if (!op.operationId) continue;
          const needs = (op.security ?? spec.security ?? []).flatMap((r) =>
            Object.entries(r).flatMap(([scheme, scopes]) =>
              scheme === 'SessionCookie' ? ['session'] : scopes.length ? scopes : ['key'],
            ),
          );
          expected.set(
            `${method.toUpperCase()} ${path}`,
            needs.length ? [...new Set(needs)].sort().join(',') : 'none',
          );
        }
      }
      expect(Object.fromEntries(table), `the ${api} API's table`).toEqual(Object.fromEntries(expected));
    }
  });
});

/** Every operation of a scope table, with what its row says it needs. */
function documented(part: string): Map<string, string> {
  const rows = new Map<string, string>();
  for (const row of part.split('\n').filter((l) => l.startsWith('| `'))) {
    const [, operations = '', scope = ''] = row.split('|');
    const needs = [
      ...[...scope.matchAll(/`([a-z]+)`/g)].map((m) => m[1]!),
      ...(scope.includes('any valid key') ? ['key'] : []),
      ...(scope.includes('console session') ? ['session'] : []),
    ];
    for (const m of operations.matchAll(/`(GET|POST|PATCH|PUT|DELETE) ([^`]+)`/g)) {
      rows.set(`${m[1]} ${m[2]}`, needs.length ? [...new Set(needs)].sort().join(',') : 'none');
    }
  }
  return rows;
}

function sourceText(dir: string): string {
  let text = '';
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) text += sourceText(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
      text += readFileSync(path, 'utf8');
  }
  return text;
}
