// The demo directory, made once by `npm ci` (scripts/demo-cache.ts) through the code a first start
// runs (the migrations, the demo load, the embeddings brought up to this build) and kept as a
// dumped PGlite cluster under node_modules/.cache: a first start on an empty PGlite folder starts
// as a copy of it, and its own load then finds the listings there. It holds the directory's data
// and nothing of an installation: it is made before any account, key or secret exists, and the
// first start makes those as always. Its name carries a hash of every file that decides what the
// load makes, so a change to any of them (or another PGlite) leaves it unused: the start makes the
// listings as before.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_SEED } from './directory/demo-rows.ts';
import { MIGRATIONS } from './storage.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const src = (path: string) => join(ROOT, 'src', path);

/** What decides the demo directory's rows and schema: their files, tests aside, are hashed. */
export const DEMO_SOURCES = [
  ...MIGRATIONS,
  src('directory'),
  src('embeddings'),
  src('platform/db.ts'),
  src('platform/prng.ts'),
  src('storage.ts'),
  src('demo-cache.ts'),
  src('demo-cache-make.ts'),
  join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'),
];

function filesOf(path: string): string[] {
  if (!statSync(path, { throwIfNoEntry: false })) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** A hash of the demo's seed and count and of every file under `sources` (paths and bytes). */
export function demoCacheKey(count: number, sources: string[] = DEMO_SOURCES): string {
  const hash = createHash('sha256').update(`${String(DEMO_SEED)}\0${count}\0`);
  const files = [...new Set(sources.flatMap(filesOf))].sort();
  for (const file of files)
    hash
      .update(`${relative(ROOT, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  return hash.digest('hex').slice(0, 24);
}

const keys = new Map<number, string>();

/** Where the demo directory of `count` listings made by this build is kept. */
export function demoCacheFile(count: number, key?: string): string {
  if (key === undefined) {
    key = keys.get(count) ?? demoCacheKey(count);
    keys.set(count, key);
  }
  return join(ROOT, 'node_modules', '.cache', 'eurus', `demo-${count}-${key}.tar.gz`);
}

/**
 * The cached demo directory a first start on PGlite may start as, when this build made one:
 * undefined with PostgreSQL, without demo listings, or when none matches this build's files.
 */
export function usableDemoCache(config: {
  databaseUrl: string | undefined;
  demoListings: number;
}): string | undefined {
  if (config.databaseUrl !== undefined || config.demoListings === 0) return undefined;
  try {
    const file = demoCacheFile(config.demoListings);
    return statSync(file, { throwIfNoEntry: false })?.isFile() ? file : undefined;
  } catch {
    return undefined;
  }
}
