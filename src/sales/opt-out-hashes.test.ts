// The opt-outs of erased accounts as keyed hashes, on both storages: a kept row is not the
// address's SHA-256 (a dictionary of addresses finds nothing), sending still refuses the address
// from that domain; rows kept unkeyed by migration 0711 keep matching after 0712 and are keyed by
// the first start with a key; a row under another key is told, not silently dropped.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash, randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, storages, type TestDatabase } from '../../contract-tests/support/server.ts';
import { type Db, migrate, openDb } from '../platform/db.ts';
import { secretBox } from '../platform/secrets.ts';
import { hashKeyId, keepOptOut, upgradeOptOutHashes } from './opt-out-hashes.ts';
import { isSuppressed } from './suppressions.ts';

const SALES = fileURLToPath(new URL('./migrations', import.meta.url));
const box = secretBox(randomBytes(32));
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** A pino logger whose lines the test reads. */
function capturing() {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** A folder holding copies of some of the sales migrations, to migrate a database step by step. */
function migrationsUpTo(names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'eurus-opt-out-migrations-'));
  for (const name of names) copyFileSync(join(SALES, name), join(dir, name));
  return dir;
}

describe.each(await storages())('opt-outs of erased accounts on %s', (storage) => {
  const dirs: string[] = [];
  const databases: TestDatabase[] = [];
  const dbs: Db[] = [];

  async function database(names: string[]): Promise<Db> {
    const dir = migrationsUpTo(names);
    dirs.push(dir);
    const made = storage === 'postgres' ? await createTestDatabase() : undefined;
    if (made) databases.push(made);
    const db = await openDb({ databaseUrl: made?.url, dataDir: 'memory://' }, [dir]);
    dbs.push(db);
    return db;
  }

  afterAll(async () => {
    for (const db of dbs) await db.close();
    for (const d of databases) await d.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** isSuppressed needs the account's own list too: an empty one. */
  const suppressionsTable = `create table if not exists suppressions (id text primary key, account_id text not null,
    email text not null, reason text not null, campaign_id text, created bigint not null)`;

  it('keeps a keyed hash that a dictionary of addresses does not find, and sending refuses it', async () => {
    const db = await database(['0711_suppression_hashes.sql', '0712_suppression_hashes_keyed.sql']);
    await db.query(suppressionsTable);
    await keepOptOut(db, box, 'Shop.example', 'ada@customer.test', 'unsubscribed', 1);
    const [row] = await db.query<Record<string, string>>('select * from suppression_hashes');
    expect(row).toMatchObject({ domain: 'shop.example', hash_form: 'hmac-sha256', key_id: hashKeyId(box) });
    expect(row!.email_hash).toMatch(/^[0-9a-f]{64}$/);
    // the attack the key stops: hashing a list of addresses and looking them up
    expect(row!.email_hash).not.toBe(sha256('ada@customer.test'));
    // no part of the address in the row: its local part and its domain (the hash is hex, which
    // may hold the letters "ada" by chance, once in about 66 keys, so the check is on the words)
    expect(Object.values(row!).join(' ')).not.toMatch(/ada@|customer\.test/i);

    expect(await isSuppressed(db, box, 'acc_b', ' ADA@customer.test', 'news@shop.example')).toBe(true);
    expect(await isSuppressed(db, box, 'acc_b', 'ada@customer.test', 'news@other.example')).toBe(false);
    expect(await isSuppressed(db, box, 'acc_b', 'bob@customer.test', 'news@shop.example')).toBe(false);
    // under another key the row is not found, and the start says so rather than sending quietly
    const other = secretBox(randomBytes(32));
    expect(await isSuppressed(db, other, 'acc_b', 'ada@customer.test', 'news@shop.example')).toBe(false);
    const { logger, lines } = capturing();
    expect(await upgradeOptOutHashes(db, other, logger)).toEqual({ keyed: 0, unkeyed: 0, otherKey: 1 });
    expect(lines.find((l) => l.level === 50)?.msg).toMatch(/another|does not have/);
  });

  it('migrates the unkeyed rows of 0711: they match meanwhile, the first start with a key keys them', async () => {
    const db = await database(['0711_suppression_hashes.sql']);
    await db.query(suppressionsTable);
    // as the erasure of 0711 kept them: the SHA-256 of the lower-case address
    for (const [domain, email] of [
      ['shop.example', 'ada@customer.test'],
      ['shop.example', 'grace@customer.test'],
      ['other.example', 'ada@customer.test'],
    ] as const) {
      await db.query(
        `insert into suppression_hashes (domain, email_sha256, reason, created) values ($1, $2, 'unsubscribed', 7)`,
        [domain, sha256(email)],
      );
    }
    await migrate(db, [migrationsUpTo(['0711_suppression_hashes.sql', '0712_suppression_hashes_keyed.sql'])]);
    expect(
      (await db.query<{ hash_form: string }>('select hash_form from suppression_hashes')).map(
        (r) => r.hash_form,
      ),
    ).toEqual(['sha256', 'sha256', 'sha256']);
    // before the upgrade: found with the key (by the older form) and without one
    expect(await isSuppressed(db, box, 'acc_b', 'Ada@customer.test', 'news@shop.example')).toBe(true);
    expect(await isSuppressed(db, undefined, 'acc_b', 'ada@customer.test', 'news@shop.example')).toBe(true);

    // a process without a key keeps them as they are, erasure there keeps the older form, and the
    // start says how to key them
    await keepOptOut(db, undefined, 'third.example', 'eve@customer.test', 'manual', 8);
    expect(await isSuppressed(db, undefined, 'acc_b', 'Eve@customer.test', 'x@third.example')).toBe(true);
    const unkeyedStart = capturing();
    expect(await upgradeOptOutHashes(db, undefined, unkeyedStart.logger)).toEqual({
      keyed: 0,
      unkeyed: 4,
      otherKey: 0,
    });
    expect(unkeyedStart.lines.find((l) => l.level === 40)?.msg).toMatch(/SECRETS_KEY_FILE/);
    // an erasure meanwhile, keyed, of an address already kept unkeyed: merged by the upgrade
    await keepOptOut(db, box, 'shop.example', 'grace@customer.test', 'hard_bounce', 9);

    const { logger } = capturing();
    expect(await upgradeOptOutHashes(db, box, logger)).toEqual({ keyed: 4, unkeyed: 0, otherKey: 0 });
    const rows = await db.query<{ domain: string; email_hash: string; hash_form: string; created: string }>(
      'select domain, email_hash, hash_form, created from suppression_hashes order by domain, created',
    );
    expect(rows).toHaveLength(4);
    expect(rows.every((r) => r.hash_form === 'hmac-sha256')).toBe(true);
    const plain = new Set(['ada', 'grace', 'eve'].map((n) => sha256(`${n}@customer.test`)));
    expect(rows.some((r) => plain.has(r.email_hash))).toBe(false);
    expect(await isSuppressed(db, box, 'acc_b', 'ada@customer.test', 'news@shop.example')).toBe(true);
    expect(await isSuppressed(db, box, 'acc_b', 'grace@customer.test', 'news@shop.example')).toBe(true);
    expect(await isSuppressed(db, box, 'acc_b', 'ada@customer.test', 'hi@other.example')).toBe(true);
    expect(await isSuppressed(db, box, 'acc_b', 'grace@customer.test', 'hi@other.example')).toBe(false);
    expect(await isSuppressed(db, box, 'acc_b', 'eve@customer.test', 'x@third.example')).toBe(true);
    // idempotent: a second start finds nothing to do
    expect(await upgradeOptOutHashes(db, box, logger)).toEqual({ keyed: 0, unkeyed: 0, otherKey: 0 });
  });
});
