// What one usage row costs PGlite to store (docs/benchmarks.md, issue 22 point 2): the usage
// journal's insert (src/platform/metering.ts, a row list of VALUES) against one statement over
// arrays (unnest), in batches of 1, 35 and 100 rows, into a fresh in-memory PGlite holding the
// usage_records table of the migrations. CPU time of this process per row.
//
//   node bench/usage-insert.ts
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';

const migration = readFileSync(
  new URL('../src/platform/migrations/0001_accounts.sql', import.meta.url),
  'utf8',
);
const table = migration.slice(
  migration.indexOf('create table usage_records'),
  migration.indexOf('-- Idempotency-Key'),
);
const db = await PGlite.create();
await db.exec(table);

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

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
for (const batch of [1, 35, 100]) {
  for (const [name, insert] of [
    ['values', values],
    ['unnest', unnest],
  ] as const) {
    for (let i = 0; i < 20; i++) await insert(Array.from({ length: batch }, row));
    const statements = Math.max(20, Math.round(3000 / batch));
    const start = cpuMs();
    for (let i = 0; i < statements; i++) await insert(Array.from({ length: batch }, row));
    const us = ((cpuMs() - start) / (statements * batch)) * 1000;
    console.log(`batch ${batch}, ${name}: ${Math.round(us)} us of CPU a row`);
  }
}
await db.close();
