// The search index's snapshot (SEARCH_INDEX_SNAPSHOT): a restart reads it instead of building
// the index, applies the listings added since, and ranks exactly as an index built from the
// database; a corrupt, cut or stale file is refused and the index built. The load only asks for
// the file: it is written after (index-snapshot.ts), once the service has said ready. Each
// "restart" is a new handle on the same database (the index is kept per handle).
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, storages, type TestDatabase } from '../../../contract-tests/support/server.ts';
import type { Db } from '../../platform/db.ts';
import { openStorage } from '../../storage.ts';
import { demoListing, loadDemoDirectory } from '../demo.ts';
import { createSearch, type SearchParams } from '../search/search.ts';
import { Snapshots } from '../search/snapshot.ts';
import { insertListings } from '../store.ts';
import { writeIndexSnapshot } from '../index-snapshot.ts';
import {
  indexOf,
  indexOrigin,
  listingColumns,
  openVectors,
  refreshVectors,
  SNAPSHOT_DUE,
} from '../vectors.ts';

const NOW = new Date('2026-11-20T10:00:00Z');
const QUERIES: SearchParams[] = [
  { q: 'plumber', mode: 'keyword' },
  { q: 'my kitchen pipe is leaking', mode: 'semantic' },
  { q: 'hair salon', mode: 'hybrid', country: 'DE' },
  { q: 'restaurant', mode: 'hybrid', near: '52.52,13.405', radius_km: 400 },
  { q: 'Bäckerei', mode: 'keyword', limit: 5 },
];

describe.each(await storages())('on %s', (storage) => {
  let db: Db;
  let database: TestDatabase | undefined;
  let dir: string;
  let file: string;

  beforeAll(async () => {
    if (storage === 'postgres') database = await createTestDatabase();
    db = await openStorage({ databaseUrl: database?.url, dataDir: 'memory://' });
    await loadDemoDirectory(db, { count: 1200, seed: 'snapshot' });
    dir = mkdtempSync(join(tmpdir(), 'eurus-index-snapshot-'));
    file = join(dir, 'search-index.snapshot');
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A new handle on the database, as a restarted service has (methods bound to the real one). */
  const restart = (): Db =>
    new Proxy(db, {
      get(target, key) {
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });

  /** Loads an index on a new handle (with the snapshot file or none) and runs every query on it. */
  const start = async (snapshot: string | undefined) => {
    const handle = restart();
    openVectors(handle, { snapshot });
    await refreshVectors(handle);
    // the load only asks for the file: a service writes it once it has said ready
    const due = indexOrigin(handle)?.written;
    await writeIndexSnapshot(handle);
    const search = createSearch(handle);
    const pages = [];
    for (const params of QUERIES) pages.push(await search.search(params, NOW, { baseUrl: 'https://d.test' }));
    await expectSqlMean(new Snapshots(handle), handle);
    return { origin: indexOrigin(handle), due, pages, columns: listingColumns(handle), handle };
  };

  /** The mean rating a snapshot ranks with (summed from the index) is SQL's, as rounded. */
  const expectSqlMean = async (snapshots: Snapshots, handle: Db) => {
    const { seq, mean } = await snapshots.current();
    const [sql] = await handle.query<{ m: number | null }>(
      'select avg(rating)::float8 as m from listings where rating is not null and seq <= $1',
      [seq],
    );
    expect(sql?.m).toBeGreaterThan(0);
    expect(mean).toBe(Math.round(sql!.m! * 1e4) / 1e4);
  };

  it('writes the index after a build, and a restart reads it and ranks the same', async () => {
    const built = await start(file);
    expect(built.origin).toMatchObject({ from: 'missing', caughtUp: 1200 });
    expect(built.due).toBe(SNAPSHOT_DUE);
    expect(built.origin?.written).toBe(statSync(file).size);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(built.pages.every((p) => p.data.length > 0)).toBe(true);

    const read = await start(file);
    expect(read.origin).toEqual({ from: 'snapshot', caughtUp: 0, written: 'not needed' });
    expect(read.pages).toEqual(built.pages);
  });

  it('applies the listings added since the snapshot', async () => {
    const added = Array.from({ length: 40 }, (_, i) => demoListing('snapshot-after', i));
    const before = await start(undefined);
    const snapshots = new Snapshots(before.handle);
    await expectSqlMean(snapshots, before.handle);
    await db.transaction((tx) => insertListings(tx, added));
    // the mean summed on from where it was: the listings added since count
    await expectSqlMean(snapshots, before.handle);
    const fresh = await start(undefined);
    expect(fresh.origin?.from).toBe('no snapshot');
    const read = await start(file);
    expect(read.origin).toMatchObject({ from: 'snapshot', caughtUp: 40 });
    expect(read.pages).toEqual(fresh.pages);
    // the listings added are in the index read, after the 1,200 of the snapshot, in order
    expect(read.columns.size).toBe(1240);
    expect(Array.from({ length: 40 }, (_, i) => read.columns.idAt(1200 + i))).toEqual(added.map((l) => l.id));
  });

  it('adds to a positions pool read from it past the part the snapshot held', async () => {
    const read = await start(file);
    expect(read.origin?.from).toBe('snapshot');
    // the pool read holds its last chunk's used part (rounded to a MiB); a catch-up of thousands
    // of listings went past it (a RangeError that left the directory never ready)
    const keywords = indexOf(read.handle).shared.keywords;
    const { used } = keywords.poolExtent();
    const run = [16385, 16390, 16400, 32790, 49200];
    let last = 0;
    for (let n = 0; n < (1 << 20) / run.length && keywords.poolExtent().chunks === 1; n++)
      last = keywords.store(run);
    expect(last).toBeGreaterThan(used + (1 << 19));
    expect(keywords.run({ data: Int32Array.of(0, last), codes: Uint16Array.of(0), length: 2 }, 0)).toEqual(
      run,
    );
  });

  it('refuses a corrupt, cut or stale snapshot and builds the index instead', async () => {
    const good = readFileSync(file);
    const fresh = await start(undefined);

    const flipped = Buffer.from(good);
    flipped[Math.floor(flipped.length / 2)]! ^= 0x40;
    writeFileSync(file, flipped);
    const corrupt = await start(file);
    expect(corrupt.origin?.from).toBe('checksum');
    expect(corrupt.pages).toEqual(fresh.pages);

    writeFileSync(file, good);
    truncateSync(file, good.length - 1000);
    expect((await start(file)).origin?.from).toBe('format');

    // the listings re-embedded since (another engine's version): the snapshot's vectors are stale
    writeFileSync(file, good);
    await db.query(`update directory_meta set value = 'another-engine' where key = 'embedding_version'`);
    const stale = await start(file);
    expect(stale.origin?.from).toBe('identity');
    expect(stale.pages).toEqual(fresh.pages);
    // each refusal above wrote a new snapshot after building: it is read again
    expect((await start(file)).origin?.from).toBe('snapshot');
    // new words in every listing's tsv (reembed.ts rewrites them in place): stale too
    await db.query(
      `insert into directory_meta (key, value) values ('keyword_version', 'other-words')
       on conflict (key) do update set value = excluded.value`,
    );
    expect((await start(file)).origin?.from).toBe('identity');
  });

  it('is read ahead of the load, unseen until the database accepts it', async () => {
    await start(file); // the versions changed above: written anew
    const handle = restart();
    openVectors(handle, { snapshot: file }); // the read begins
    await new Promise((resolve) => setTimeout(resolve, 300));
    const columns = listingColumns(handle);
    expect([columns.size, columns.countryIds.size, columns.keywords.postings.size]).toEqual([0, 0, 0]);
    // stale by the time the load checks it: put back, and the index built
    await db.query(`update directory_meta set value = 'words-of-the-load' where key = 'keyword_version'`);
    await refreshVectors(handle);
    expect(indexOrigin(handle)?.from).toBe('identity');
    const fresh = await start(undefined);
    expect(listingColumns(handle).size).toBe(fresh.columns.size);
    expect(Array.from({ length: 50 }, (_, i) => listingColumns(handle).idAt(i * 20))).toEqual(
      Array.from({ length: 50 }, (_, i) => fresh.columns.idAt(i * 20)),
    );
    expect((await start(file)).origin?.from).toBe('identity');
    expect((await start(file)).origin?.from).toBe('snapshot');
  });

  it('is written in pieces while others are served, and loads wait until it is', async () => {
    const other = join(dir, 'pieces.snapshot');
    const handle = restart();
    openVectors(handle, { snapshot: other });
    await refreshVectors(handle);
    expect(indexOrigin(handle)).toMatchObject({ from: 'missing', written: SNAPSHOT_DUE });
    const size = listingColumns(handle).size;
    // a listing the index does not hold yet
    const added = demoListing('snapshot-during', 0);
    await db.transaction((tx) => insertListings(tx, [added]));

    let written = false;
    const writing = writeIndexSnapshot(handle, { piece: 512 }).then((bytes) => {
      written = true;
      return bytes;
    });
    // this thread runs other work between the pieces: it sees the file half written
    const half = () => readdirSync(dir).some((f) => f.startsWith('pieces.snapshot.') && f.endsWith('.tmp'));
    while (!written && !half()) await new Promise((resolve) => setImmediate(resolve));
    expect(written).toBe(false);
    // the load of the new listing waits: the file is of the index as the write began
    await refreshVectors(handle);
    expect(written).toBe(true);
    expect(await writing).toBe(statSync(other).size);
    expect(listingColumns(handle).size).toBe(size + 1);

    const fresh = await start(undefined);
    const read = await start(other);
    expect(read.origin).toMatchObject({ from: 'snapshot', caughtUp: 1 });
    expect(read.columns.idAt(size)).toBe(added.id);
    expect(read.pages).toEqual(fresh.pages);
  });
});
