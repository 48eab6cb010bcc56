// Makes the demo directory's cache (demo-cache.ts): `npm ci` runs it (scripts/demo-cache.ts). It
// holds what the migrations and the demo load write (listings, directory_meta), less the one value
// a migration makes per installation (console_settings' throttle name, remade at start); accounts,
// keys, secrets and pg-boss's tables are made by the first start, never here.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { forgetThrottleNamespace } from './console/store.ts';
import { demoCacheFile } from './demo-cache.ts';
import { loadDemoDirectory } from './directory/demo.ts';
import { ensureEmbeddings } from './directory/reembed.ts';
import { openStorage } from './storage.ts';

/**
 * Makes the demo directory of `count` listings as a first start would, in a folder of its own,
 * and keeps its cluster in `file` (whole or not at all). Returns `file`.
 */
export async function makeDemoCache(count: number, file = demoCacheFile(count)): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'eurus-demo-cache-'));
  try {
    const db = await openStorage({ dataDir: dir });
    try {
      await loadDemoDirectory(db, { count });
      await ensureEmbeddings(db);
      // a migration's random name of the installation: each first start makes its own
      await forgetThrottleNamespace(db);
    } finally {
      await db.close();
    }
    const pg = await PGlite.create(dir);
    let dump: Blob;
    try {
      dump = await pg.dumpDataDir('gzip');
    } finally {
      await pg.close();
    }
    mkdirSync(dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(temporary, Buffer.from(await dump.arrayBuffer()), { mode: 0o600 });
      renameSync(temporary, file);
    } finally {
      rmSync(temporary, { force: true });
    }
    return file;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
