// Values that take a second of CPU to make and are the same at every start (parsed data files),
// kept under node_modules/.cache by the first process that makes them and read back by the next
// (a test run starts the services a hundred times). A file's name carries a hash of what decides
// its value: the files given (code and data, by their bytes or, for large data, size and time)
// and V8's version (the format). A missing, stale or unreadable file is made again; an install
// that cannot be written to makes the value at each start, as without the cache.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';

export const CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/eurus', import.meta.url));

/** `make()`, or what an earlier process made from the same `code` (bytes) and `data` (size, time). */
export function cachedOnDisk<T>(
  name: string,
  inputs: { code: (string | URL)[]; data: string[] },
  make: () => T,
): T {
  const hash = createHash('sha256').update(`${process.versions.v8}\0`);
  for (const file of inputs.code) hash.update(readFileSync(file)).update('\0');
  for (const file of inputs.data) {
    const stat = statSync(file);
    hash.update(`${file}\0${stat.size}\0${stat.mtimeMs}\0`);
  }
  const file = join(CACHE_DIR, `${name}-${hash.digest('hex').slice(0, 24)}.v8`);
  try {
    return deserialize(readFileSync(file)) as T;
  } catch {
    // not made yet (or unreadable): made below
  }
  const value = make();
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(temporary, serialize(value));
    renameSync(temporary, file); // whole or not at all, whoever reads it meanwhile
  } catch {
    // a read-only install: made at each start
  } finally {
    rmSync(temporary, { force: true });
  }
  return value;
}
