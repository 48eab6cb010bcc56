// Summarizes a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time,
// and the same time grouped by package or source folder, so "where does the time go" is one table.
// `node bench/profile-summary.ts FILE.cpuprofile [top] [last-ms]` (last-ms: only the profile's last
// milliseconds, e.g. the load after start-up)
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileRow {
  name: string;
  where: string;
  selfMs: number;
  percent: number;
}

/** Where a script URL belongs: `express`, `@electric-sql/pglite`, `src/model`, `node:internal`... */
export function origin(url: string): string {
  if (url === '') return '(native/vm)';
  if (url.startsWith('node:')) return url.startsWith('node:internal') ? 'node:internal' : url;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + '/node_modules/'.length).split('/');
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? url);
  }
  const src = url.search(/\/(src|generated|bench)\//);
  if (src >= 0)
    return url
      .slice(src + 1)
      .split('/')
      .slice(0, 2)
      .join('/');
  return url;
}

const FRAMEWORK = new Set([
  'express',
  'router',
  'body-parser',
  'raw-body',
  'content-type',
  'type-is',
  'media-typer',
  'mime-types',
  'mime-db',
  'path-to-regexp',
  'express-openapi-validator',
  'ajv',
  'ajv-formats',
  'fast-uri',
  'fast-deep-equal',
  'json-schema-traverse',
  'debug',
  'iconv-lite',
  'qs',
  'parseurl',
  'on-finished',
  'finalhandler',
  'depd',
  'vary',
  'statuses',
  'http-errors',
  'encodeurl',
  'escape-html',
  'cookie',
  'lodash.clonedeep',
  '@apidevtools/json-schema-ref-parser',
]);

/** The layer a function's self time belongs to, for "where does the time go". */
export function layer(name: string, group: string): string {
  if (name === '(garbage collector)') return 'garbage collection';
  if (group.startsWith('wasm://') || group === '@electric-sql/pglite')
    return 'storage: PGlite (usage inserts)';
  if (FRAMEWORK.has(group)) return 'Express, body parser, OpenAPI validator (ajv)';
  if (group === 'gpt-tokenizer' || group === 'src/model') return 'chat route, reference engine, tokenizer';
  if (group.startsWith('src/') || group === 'prom-client' || group === 'pino')
    return 'our middleware (ids, metrics, limits, auth)';
  if (group.startsWith('node:') || group === '(native/vm)' || group === '(program)')
    return 'Node: HTTP, sockets, runtime';
  return `other (${group})`;
}

export function summarize(
  profile: CpuProfile,
  top = 25,
  /** only the last this many ms of the profile (leaves start-up out); all of it by default */
  lastMs = Number.POSITIVE_INFINITY,
): { functions: ProfileRow[]; origins: ProfileRow[]; layers: ProfileRow[]; totalMs: number; busyMs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const spanUs = profile.timeDeltas.reduce((a, b) => a + b, 0);
  let at = 0;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (spanUs - at > lastMs * 1000) return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const functions = new Map<string, ProfileRow>();
  const origins = new Map<string, ProfileRow>();
  const layers = new Map<string, ProfileRow>();
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const file = frame.url.split('/').slice(-1)[0] ?? '';
    const name = frame.functionName || '(anonymous)';
    const where = frame.url ? `${origin(frame.url)} ${file}:${frame.lineNumber + 1}` : '';
    const key = `${name} ${where}`;
    const row = functions.get(key) ?? { name, where, selfMs: 0, percent: 0 };
    row.selfMs += us / 1000;
    functions.set(key, row);
    const group =
      name === '(garbage collector)' || name === '(idle)' || name === '(program)' ? name : origin(frame.url);
    const o = origins.get(group) ?? { name: group, where: '', selfMs: 0, percent: 0 };
    o.selfMs += us / 1000;
    origins.set(group, o);
    if (name === '(idle)') {
      idleUs += us;
      continue;
    }
    const l = layer(name, group);
    const lr = layers.get(l) ?? { name: l, where: '', selfMs: 0, percent: 0 };
    lr.selfMs += us / 1000;
    layers.set(l, lr);
  }
  const busyUs = totalUs - idleUs;
  const finish = (rows: Iterable<ProfileRow>) =>
    [...rows]
      .map((r) => ({
        ...r,
        selfMs: Math.round(r.selfMs),
        percent: Math.round((r.selfMs / (totalUs / 1000)) * 1000) / 10,
      }))
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, top);
  // Layers are shares of the busy time (idle left out): what a request's CPU time is made of.
  const byLayer = [...layers.values()]
    .map((r) => ({
      ...r,
      selfMs: Math.round(r.selfMs),
      percent: Math.round((r.selfMs / (busyUs / 1000)) * 1000) / 10,
    }))
    .sort((a, b) => b.selfMs - a.selfMs);
  return {
    functions: finish(functions.values()),
    origins: finish(origins.values()),
    layers: byLayer,
    totalMs: Math.round(totalUs / 1000),
    busyMs: Math.round(busyUs / 1000),
  };
}

if (import.meta.main) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node bench/profile-summary.ts FILE.cpuprofile [top] [last-ms]');
    process.exit(2);
  }
  const { functions, origins, layers, totalMs, busyMs } = summarize(
    JSON.parse(readFileSync(file, 'utf8')) as CpuProfile,
    Number(process.argv[3] ?? 25),
    Number(process.argv[4] ?? Number.POSITIVE_INFINITY),
  );
  console.log(
    `total sampled: ${totalMs} ms, busy (not idle): ${busyMs} ms\n\nby layer (share of busy time):`,
  );
  for (const r of layers)
    console.log(`${String(r.percent).padStart(5)}%  ${String(r.selfMs).padStart(7)} ms  ${r.name}`);
  console.log('\nby package or folder (self time):');
  for (const r of origins)
    console.log(`${String(r.percent).padStart(5)}%  ${String(r.selfMs).padStart(7)} ms  ${r.name}`);
  console.log('\ntop functions (self time):');
  for (const r of functions)
    console.log(
      `${String(r.percent).padStart(5)}%  ${String(r.selfMs).padStart(7)} ms  ${r.name}  ${r.where}`,
    );
}
