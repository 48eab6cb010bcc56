// A fresh PGlite cluster, made once by the installed PGlite (`npm ci` runs
// scripts/pglite-template.ts) and copied into every new database instead of running initdb: its
// initdb was 4 s of CPU of every first start and of every test that opens PGlite, and what it
// makes is the same each time for one PGlite version (the file is named for it, so an upgrade
// makes a new one). No data of ours is in it: the migrations run on the copy as on initdb's.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function pgliteVersion(): string {
  const manifest = join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/** Where the installed PGlite's template is kept (under node_modules/.cache, not in the repo). */
export function templateFile(): string {
  return join(ROOT, 'node_modules', '.cache', 'eurus', `pglite-${pgliteVersion()}-cluster.tar.gz`);
}

/** The template's bytes, or undefined when it was not made (initdb runs then, as before). */
export function readTemplate(): Blob | undefined {
  try {
    return new Blob([readFileSync(templateFile())]);
  } catch {
    return undefined;
  }
}

/** Makes the template: initdb in memory, dumped as a gzipped tarball; returns its path. */
export async function makeTemplate(file = templateFile()): Promise<string> {
  const db = await PGlite.create();
  try {
    const dump = await db.dumpDataDir('gzip');
    mkdirSync(dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(temporary, Buffer.from(await dump.arrayBuffer()));
      renameSync(temporary, file); // whole or not at all, whoever reads it meanwhile
    } finally {
      rmSync(temporary, { force: true });
    }
  } finally {
    await db.close();
  }
  return file;
}
