// The data folder holds the database, mail, usage records and the secrets key: readable by the
// service's own user alone. PGlite makes its first files 0666 in a 0755 folder whatever the
// umask (its initdb writes them with explicit modes), so modes are set here, not hoped for.
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

/**
 * Makes `dir` (created when missing, unless `create` is false) and every folder under it 0700,
 * every file 0600: only what is wider is changed; symbolic links are left alone (never
 * followed). Returns how many entries it changed.
 */
export function keepPrivate(dir: string, options: { create?: boolean } = {}): number {
  if (options.create ?? true) mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  return narrow(dir);
}

function narrow(path: string): number {
  try {
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat || stat.isSymbolicLink()) return 0;
    let changed = 0;
    const wanted = stat.isDirectory() ? PRIVATE_DIR : PRIVATE_FILE;
    if ((stat.mode & 0o777 & ~wanted) !== 0) {
      chmodSync(path, stat.mode & wanted);
      changed++;
    }
    if (stat.isDirectory()) for (const name of readdirSync(path)) changed += narrow(join(path, name));
    return changed;
  } catch (err) {
    // a file the database removed while we walked
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
}
