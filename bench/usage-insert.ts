// What one usage row costs PGlite to store (docs/benchmarks.md, issues 22 and 33): a row list
// of VALUES against one statement over arrays (unnest, what src/platform/metering.ts sends), in
// batches of 1, 35 and 100 rows, into a fresh in-memory PGlite holding the usage_records table
// of the migrations; CPU time per row. Then the same through the embedded database's worker
// thread (src/platform/embedded.ts, as the services run it): the CPU of this process's main
// thread (the one that serves HTTP in the services) against the whole process's, per row and
// per small statement (a `select 1`, what a job-queue poll costs the main thread at least).
//
//   node bench/usage-insert.ts
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { openEmbedded } from '../src/platform/embedded.ts';
import type { Queryable } from '../src/platform/db.ts';

const migration = readFileSync(
  new URL('../src/platform/migrations/0940_usage_records.sql', import.meta.url),
  'utf8',
);
const table = migration.slice(
  migration.indexOf('create table if not exists usage_records'),
  migration.indexOf('-- Idempotency-Key'),
);
const inProcess = await PGlite.create();
await inProcess.exec(table);
let db: Queryable = { query: async (sql, params) => (await inProcess.query<never>(sql, params)).rows };

const COLUMNS = [
  ['id', 'text'],
  ['service', 'text'],
  ['account_id', 'text'],
  ['project_id', 'text'],
  ['key_id', 'text'],
  ['model', 'text'],
  ['endpoint', 'text'],
  ['input_tokens', 'bigint'],
  ['output_tokens', 'bigint'],
  ['audio_seconds', 'float8'],
  ['images', 'bigint'],
  ['steps', 'bigint'],
  ['units', 'bigint'],
  ['cost_nano', 'bigint'],
  ['status', 'int4'],
  ['latency_ms', 'int4'],
  ['streamed', 'bool'],
  ['disconnected', 'bool'],
  ['created', 'bigint'],
  ['day', 'date'],
] as const;
const names = COLUMNS.map(([name]) => name).join(', ');

let n = 0;
const row = (): unknown[] => [
  `usg_${String(n++).padStart(10, '0')}_abcdefghijklmnop`,
  'model',
  'acc_1234567890abcdefghijklmn',
  'prj_1234567890abcdefghijklmn',
  'key_1234567890abcdefghijklmn',
  'prince',
  'chat.completions',
  12,
  16,
  0,
  0,
  0,
  0,
  1234,
  200,
  3,
  false,
  false,
  1_764_000_000,
  '2026-11-25',
];

async function values(rows: unknown[][]): Promise<void> {
  const list = rows.map((_, r) => `(${COLUMNS.map((_c, c) => `$${r * COLUMNS.length + c + 1}`).join(',')})`);
  await db.query(
    `insert into usage_records (${names}) values ${list.join(', ')} on conflict (id) do nothing`,
    rows.flat(),
  );
}

async function unnest(rows: unknown[][]): Promise<void> {
  const arrays = COLUMNS.map((_, c) => rows.map((r) => r[c]));
  const params = COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
  await db.query(
    `insert into usage_records (${names}) select * from unnest(${params}) on conflict (id) do nothing`,
    arrays,
  );
}

const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;
const processMs = () => cpuMs(process.cpuUsage());
const threadMs = () => cpuMs(process.threadCpuUsage());

async function measure(where: string): Promise<void> {
  for (const batch of [1, 35, 100]) {
    for (const [name, insert] of [
      ['values', values],
      ['unnest', unnest],
    ] as const) {
      for (let i = 0; i < 20; i++) await insert(Array.from({ length: batch }, row));
      const statements = Math.max(20, Math.round(3000 / batch));
      const [process0, thread0] = [processMs(), threadMs()];
      for (let i = 0; i < statements; i++) await insert(Array.from({ length: batch }, row));
      const per = (ms: number) => Math.round((ms / (statements * batch)) * 1000);
      console.log(
        `${where}, batch ${batch}, ${name}: ${per(processMs() - process0)} us of CPU a row, ` +
          `${per(threadMs() - thread0)} on the main thread`,
      );
    }
  }
  const [process0, thread0] = [processMs(), threadMs()];
  for (let i = 0; i < 2000; i++) await db.query('select 1');
  console.log(
    `${where}, select 1: ${Math.round((processMs() - process0) / 2)} us of CPU each, ` +
      `${Math.round((threadMs() - thread0) / 2)} on the main thread`,
  );
}

await measure('in this thread');
await inProcess.close();

const worker = await openEmbedded('memory://');
await worker.script(table);
db = worker;
await measure('worker thread');
await worker.close();
