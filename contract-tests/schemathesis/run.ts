// The schemathesis run: `node contract-tests/schemathesis/run.ts [model|directory] [--storage pglite|postgres] [--full]`.
// Installs the pinned schemathesis into .venv/ (once), then makes one pass per storage path (both
// unless --storage names one). Each pass starts both services fresh through the README's start
// command (a random BOOTSTRAP_ADMIN_KEY, free ports): on PGlite in memory with in-memory limits,
// or on a fresh PostgreSQL database with REDIS_URL set (limits in Redis's Lua buckets, revocation
// over pub/sub). Per service it checks that every operation marked pending in <service>.toml
// still answers 501, and runs `st run` on the bundled spec with every phase and check on. JUnit
// reports and the server log go to test-results/schemathesis/. Exits 1 on any failure.
// By default both passes run a light profile (fewer examples per operation, every phase and check
// still on); --full or SCHEMATHESIS_FULL=1 runs the configs' full profile on both. Each service and storage
// path is a job with a server process of its own; SCHEMATHESIS_JOBS of them run at once (2, the
// longest first: the directory on PGlite).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { startTestDns } from '../support/dns.ts';
import { freePort, stop, waitForHttp } from '../support/processes.ts';
import {
  createTestDatabase,
  storages,
  TEST_REDIS_URL,
  type Storage,
  type TestDatabase,
} from '../support/server.ts';
import { redisAvailable } from '../support/instances.ts';
import { fetchExample } from '../support/requests.ts';
import { type Api, operations } from '../support/spec.ts';
import { reportOf } from './report.ts';

const HERE = 'contract-tests/schemathesis';
const VENV = '.venv';
const REPORTS = 'test-results/schemathesis';
const APIS: Api[] = ['model', 'directory'];

/**
 * The light profile, which `npm test` runs unless --full or SCHEMATHESIS_FULL=1 asks for the
 * configs' 200 examples per operation on both passes (SCHEMATHESIS_MAX_EXAMPLES overrides both).
 * Every phase and check runs either way: the coverage phase's boundary values and the stateful
 * phase's links do not depend on the count, only the fuzzing phase's random draws do, and at 200
 * they were some 1,240 s of CI's 2,000 (issue 31). The PGlite pass covers the contract (100); the
 * PostgreSQL + Redis pass is there for what differs on the production path (PostgreSQL's own
 * parsing of text, numbers and ranges, the Redis limiter and revocation bus under the fuzzer, the
 * pg pool), which every phase reaches with fewer examples (25).
 */
const LIGHT_MAX_EXAMPLES: Record<Storage, string> = { pglite: '100', postgres: '25' };

function pinnedVersion(): string {
  const line = readFileSync(`${HERE}/requirements.txt`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('schemathesis=='));
  if (!line) throw new Error(`${HERE}/requirements.txt must pin schemathesis==<version>`);
  return line.slice('schemathesis=='.length).trim();
}

function ensureSchemathesis(): string {
  const st = `${VENV}/bin/st`;
  const version = pinnedVersion();
  let installed = '';
  try {
    installed = execFileSync(st, ['--version'], { encoding: 'utf8' });
  } catch {
    // not installed yet
  }
  if (!installed.includes(version)) {
    console.log(`schemathesis: installing ${version} into ${VENV}/ from PyPI`);
    if (!existsSync(`${VENV}/bin/python`))
      execFileSync('python3', ['-m', 'venv', VENV], { stdio: 'inherit' });
    execFileSync(
      `${VENV}/bin/pip`,
      ['install', '--quiet', '--disable-pip-version-check', '-r', `${HERE}/requirements.txt`],
      { stdio: 'inherit' },
    );
  }
  return st;
}

/** The operationIds a config marks pending: its `[[operations]]` entries with `enabled = false`. */
function pendingOf(api: Api): string[] {
  const script = [
    'import json, sys, tomllib',
    'config = tomllib.load(open(sys.argv[1], "rb"))',
    'ids = [i for op in config.get("operations", []) if op.get("enabled") is False',
    '       for i in ([op["include-operation-id"]] if isinstance(op.get("include-operation-id"), str)',
    '                 else op.get("include-operation-id", []))]',
    'print(json.dumps(ids))',
  ].join('\n');
  const out = execFileSync(`${VENV}/bin/python`, ['-c', script, `${HERE}/${api}.toml`], { encoding: 'utf8' });
  return JSON.parse(out) as string[];
}

/** Problems with the pending list: unknown ids, and pending operations that answer anything but 501. */
async function checkPending(api: Api, base: string, key: string, pending: string[]): Promise<string[]> {
  const ops = operations(api);
  const known = new Set(ops.map((op) => op.operationId));
  const problems = pending
    .filter((id) => !known.has(id))
    .map((id) => `${api}: pending operation ${id} is not in the spec`);
  for (const op of ops.filter((o) => pending.includes(o.operationId))) {
    const res = await fetchExample(base, op, { key });
    const text = await res.text();
    if (res.status !== 501) {
      problems.push(
        `${api}: ${op.operationId} (${op.method} ${op.path}) is marked pending but answered ${res.status}, ` +
          `not 501: take it off the pending list in ${HERE}/${api}.toml. Body: ${text.slice(0, 300)}`,
      );
    }
  }
  return problems;
}

/** The id of the key a secret belongs to, found by its masked preview. */
async function keyIdOf(modelBase: string, secret: string): Promise<string> {
  const res = await fetch(`${modelBase}/v1/keys?limit=100`, {
    headers: { authorization: `Bearer ${secret}` },
  });
  const page = (await res.json()) as { data?: Array<{ id: string; preview: string }> };
  const key = page.data?.find((k) => k.preview === `sk_...${secret.slice(-4)}`);
  if (!key) throw new Error(`cannot find the admin key in GET /v1/keys (${res.status})`);
  return key.id;
}

/** A key for the fuzzer to revoke and rotate in place of its own (see hooks.py). */
async function createDecoy(modelBase: string, secret: string): Promise<string> {
  const res = await fetch(`${modelBase}/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'schemathesis decoy', scopes: ['admin'] }),
  });
  if (res.status !== 201) throw new Error(`cannot create the decoy key: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** Subscribes the admin's account to a plan, so the operations it unlocks reach their handlers (briefs need `concierge`, launching campaigns `sales`). */
async function subscribe(modelBase: string, secret: string, plan: string): Promise<void> {
  const res = await fetch(`${modelBase}/v1/subscriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ plan }),
  });
  if (res.status !== 201) throw new Error(`cannot subscribe to ${plan}: ${res.status} ${await res.text()}`);
}

/**
 * Runs schemathesis. On a terminal its live progress goes straight through. Elsewhere (CI, a
 * pipe) that progress is hundreds of spinner frames drawn with cursor codes, which bury the
 * result in a log: the whole output goes to `log` instead, and only its report (warnings,
 * failures, summary; from the first `=== ... ===` banner on) is printed, without escape codes.
 */
function run(command: string, args: string[], env: Record<string, string>, log: string): Promise<number> {
  const live = process.stdout.isTTY === true;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: live ? 'inherit' : ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    const chunks: Buffer[] = [];
    child.stdout?.on('data', (c: Buffer) => chunks.push(c));
    child.stderr?.on('data', (c: Buffer) => chunks.push(c));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (!live) {
        const text = Buffer.concat(chunks).toString('utf8');
        writeFileSync(log, text);
        console.log(reportOf(text));
        console.log(`(full output: ${log})`);
      }
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

interface Pass {
  storage: Storage;
  /** Environment of the services for this storage path. */
  env: Record<string, string>;
  maxExamples: string | undefined;
  /** Suffix of the report and log names: none for PGlite, as before. */
  suffix: string;
  cleanup(): Promise<void>;
}

async function preparePass(storage: Storage, full: boolean): Promise<Pass> {
  if (storage === 'pglite') {
    return {
      storage,
      env: { DATA_DIR: 'memory://', DATABASE_URL: '', REDIS_URL: '' },
      maxExamples: process.env.SCHEMATHESIS_MAX_EXAMPLES ?? (full ? undefined : LIGHT_MAX_EXAMPLES.pglite),
      suffix: '',
      cleanup: async () => {},
    };
  }
  const database: TestDatabase = await createTestDatabase();
  return {
    storage,
    // an operator's secrets key, so webhook endpoints can keep their signing secrets
    env: {
      DATA_DIR: 'memory://',
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      SECRETS_ENCRYPTION_KEY: '5e'.repeat(32),
    },
    maxExamples: process.env.SCHEMATHESIS_MAX_EXAMPLES ?? (full ? undefined : LIGHT_MAX_EXAMPLES.postgres),
    suffix: '-postgres',
    cleanup: () => database.drop(),
  };
}

async function runPass(st: string, apis: Api[], pass: Pass): Promise<string[]> {
  const adminKey = `sk_st_admin_${randomBytes(16).toString('hex')}`;
  const ports = { model: await freePort(), directory: await freePort() };
  const log = createWriteStream(`${REPORTS}/server-${apis.join('-')}${pass.suffix}.log`);
  const label =
    pass.storage === 'pglite' ? 'PGlite, limits in memory' : 'PostgreSQL, limits and revocations in Redis';
  const profile = pass.maxExamples
    ? `${pass.maxExamples} examples per operation${process.env.SCHEMATHESIS_MAX_EXAMPLES ? '' : ', light profile: --full or SCHEMATHESIS_FULL=1 for the full one'}`
    : 'full profile';
  console.log(`\n==== schemathesis of ${apis.join(' and ')} on ${label} (${profile}) ====`);
  // Sending domains are verified through a DNS server on loopback that knows no name (every record
  // `missing`, at once): the machine may have no resolver that answers, and a lookup waiting ~10 s
  // for one would stall the run. contract-tests/sending-domains.test.ts publishes and verifies.
  const dns = await startTestDns();
  const server: ChildProcess = spawn(process.execPath, ['src/main.ts'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      MODEL_API_PORT: String(ports.model),
      DIRECTORY_API_PORT: String(ports.directory),
      INBOUND_SMTP_PORT: '0',
      DNS_SERVERS: dns.server,
      BOOTSTRAP_ADMIN_KEY: adminKey,
      LOG_LEVEL: 'warn',
      // One admin key sends every request: the model API's 600 a minute would turn the run
      // into 429s. The contract suites test the limits; here the fuzzer must reach the handlers.
      MODEL_RATE_LIMIT_RPM: '100000000',
      // A small demo directory: enough to search, quick to load.
      DEMO_LISTINGS: '500',
      // Webhook URLs are saved without resolving them, so the stateful phase can create endpoints
      // and follow their links; the guard itself is tested in vitest (outbound, webhooks).
      OUTBOUND_ALLOW_PRIVATE: 'true',
      // A CRM connection is made after a check call to the CRM, which no machine here can reach.
      // At 600 ms the check makes its one attempt and answers 504 at once: its first retry's
      // backoff (375 ms or more) would pass the deadline. At 1,000 ms every schema-valid body slept
      // half a second first, a minute or more of the directory's pass (contract-tests/crm.test.ts
      // connects each CRM for real, against its API description under Prism).
      CRM_CHECK_TIMEOUT_MS: '600',
      ...pass.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout?.pipe(log);
  server.stderr?.pipe(log);

  const failures: string[] = [];
  const tag = (api: Api) => `${api}${pass.suffix ? ` on ${pass.storage}` : ''}`;
  try {
    const bases = {
      model: `http://127.0.0.1:${ports.model}`,
      directory: `http://127.0.0.1:${ports.directory}`,
    };
    // as long as the suites wait for theirs (support/server.ts): the pass starts beside vitest
    await Promise.all(APIS.map((api) => waitForHttp(`${bases[api]}/readyz`, server, 180_000)));
    // The pending lists first, before any fuzzing has touched the data.
    const pending = Object.fromEntries(APIS.map((api) => [api, pendingOf(api)])) as Record<Api, string[]>;
    for (const api of apis) failures.push(...(await checkPending(api, bases[api], adminKey, pending[api])));
    const protectedKeyId = await keyIdOf(bases.model, adminKey);
    const decoyKeyId = await createDecoy(bases.model, adminKey);
    await subscribe(bases.model, adminKey, 'concierge');
    await subscribe(bases.model, adminKey, 'sales');

    for (const api of apis) {
      const built = operations(api).filter((op) => !pending[api].includes(op.operationId));
      console.log(
        `\n== ${tag(api)} API: ${built.length} operation(s) under test, ${pending[api].length} pending (501, checked) ==`,
      );
      if (built.length === 0) {
        console.log(`${api}: every operation is pending; schemathesis has nothing to test yet.`);
        continue;
      }
      const report = `${REPORTS}/${api}${pass.suffix}.xml`;
      const args = [
        '--config-file',
        `${HERE}/${api}.toml`,
        'run',
        `generated/${api}/openapi.json`,
        '--url',
        bases[api],
        '-H',
        `Authorization: Bearer ${adminKey}`,
        '--report',
        'junit',
        '--report-junit-path',
        report,
        ...(process.env.SCHEMATHESIS_SEED ? ['--seed', process.env.SCHEMATHESIS_SEED] : []),
        // plain logs where colour is not wanted (CI sets NO_COLOR: its log is read by tools)
        ...(process.env.NO_COLOR ? ['--no-color'] : []),
        ...(pass.maxExamples ? ['--max-examples', pass.maxExamples] : []),
      ];
      const started = Date.now();
      const code = await run(
        st,
        args,
        { ST_PROTECTED_KEY_ID: protectedKeyId, ST_DECOY_KEY_ID: decoyKeyId },
        report.replace(/\.xml$/, '.log'),
      );
      console.log(
        `${tag(api)}: schemathesis exited ${code} after ${Math.round((Date.now() - started) / 1000)} s`,
      );
      if (code !== 0) failures.push(`${tag(api)}: schemathesis exited ${code} (report: ${report})`);
    }
  } finally {
    await stop(server);
    await dns.close();
    log.end();
  }
  return failures;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const fullAt = args.indexOf('--full');
  if (fullAt >= 0) args.splice(fullAt, 1);
  const full = fullAt >= 0 || process.env.SCHEMATHESIS_FULL === '1';
  const storageAt = args.indexOf('--storage');
  const storageArg = storageAt >= 0 ? args.splice(storageAt, 2)[1] : undefined;
  const arg = args[0];
  if (
    (arg !== undefined && !APIS.includes(arg as Api)) ||
    (storageAt >= 0 && storageArg !== 'pglite' && storageArg !== 'postgres')
  ) {
    console.error(`usage: node ${HERE}/run.ts [model|directory] [--storage pglite|postgres] [--full]`);
    return 2;
  }
  const apis = arg ? [arg as Api] : APIS;
  let passes: Storage[] = storageArg ? [storageArg as Storage] : ['pglite', 'postgres'];
  // Both paths wherever PostgreSQL and Redis answer; in CI they must (storages() and
  // redisAvailable() throw there instead of skipping).
  if (passes.includes('postgres') && !((await storages()).includes('postgres') && (await redisAvailable()))) {
    if (storageArg)
      throw new Error('--storage postgres needs PostgreSQL and Redis (run scripts/test-deps.sh)');
    passes = passes.filter((p) => p !== 'postgres');
  }
  const st = ensureSchemathesis();
  mkdirSync(REPORTS, { recursive: true });

  // the longest first (the directory on PGlite), so the others fit beside it
  const jobs = passes.flatMap((storage) => [...apis].reverse().map((api) => ({ storage, api })));
  const width = Math.max(1, Number(process.env.SCHEMATHESIS_JOBS ?? 2));
  const failures: string[] = [];
  const worker = async () => {
    for (let job = jobs.shift(); job; job = jobs.shift()) {
      const pass = await preparePass(job.storage, full);
      const started = Date.now();
      try {
        failures.push(...(await runPass(st, [job.api], pass)));
      } catch (err) {
        // a server that never got ready fails its job; the other jobs still run and report
        failures.push(`${job.api} on ${job.storage}: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        await pass.cleanup();
      }
      console.log(
        `schemathesis of ${job.api} on ${job.storage}: ${Math.round((Date.now() - started) / 1000)} s`,
      );
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  if (failures.length > 0) {
    console.error(`\nschemathesis: FAILED\n- ${failures.join('\n- ')}`);
    return 1;
  }
  console.log(`\nschemathesis: passed (${passes.join(', ')})`);
  return 0;
}

process.exitCode = await main();
