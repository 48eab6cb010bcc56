// Summarizes a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time,
// and the same time grouped by package or source folder, so "where does the time go" is one table.
// `node bench/profile-summary.ts FILE.cpuprofile [top]`
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

export function summarize(
  profile: CpuProfile,
  top = 25,
): { functions: ProfileRow[]; origins: ProfileRow[]; totalMs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const functions = new Map<string, ProfileRow>();
  const origins = new Map<string, ProfileRow>();
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
  }
  const finish = (rows: Iterable<ProfileRow>) =>
    [...rows]
      .map((r) => ({
        ...r,
        selfMs: Math.round(r.selfMs),
        percent: Math.round((r.selfMs / (totalUs / 1000)) * 1000) / 10,
      }))
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, top);
  return {
    functions: finish(functions.values()),
    origins: finish(origins.values()),
    totalMs: Math.round(totalUs / 1000),
  };
}

if (import.meta.main) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node bench/profile-summary.ts FILE.cpuprofile [top]');
    process.exit(2);
  }
  const { functions, origins, totalMs } = summarize(
    JSON.parse(readFileSync(file, 'utf8')) as CpuProfile,
    Number(process.argv[3] ?? 25),
  );
  console.log(`total sampled: ${totalMs} ms\n\nby package or folder (self time):`);
  for (const r of origins)
    console.log(`${String(r.percent).padStart(5)}%  ${String(r.selfMs).padStart(7)} ms  ${r.name}`);
  console.log('\ntop functions (self time):');
  for (const r of functions)
    console.log(
      `${String(r.percent).padStart(5)}%  ${String(r.selfMs).padStart(7)} ms  ${r.name}  ${r.where}`,
    );
}
