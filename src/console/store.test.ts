// ConsoleStore against real storage (PGlite, migrated).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountStore } from '../accounts/store.ts';
import { type Db } from '../platform/db.ts';
import { openStorage } from '../storage.ts';
import { ConsoleStore } from './store.ts';

describe('ConsoleStore', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openStorage({ dataDir: 'memory://' });
  });
  afterAll(async () => db?.close());

  it('leaves no orphan account when another sign-up of the address wins the race', async () => {
    const store = new ConsoleStore(db, new AccountStore(db));
    expect(await store.createUser('race@example.eu', 'scrypt$1$1$1$x$y')).toBeDefined();
    // The second sign-up checked before the first inserted: it sees no user, then loses the insert.
    const late = new ConsoleStore(db, new AccountStore(db));
    late.userByEmail = async () => undefined;
    expect(await late.createUser('race@example.eu', 'scrypt$1$1$1$x$y')).toBeUndefined();
    const accounts = await db.query('select id from accounts where name = $1', ['race@example.eu']);
    expect(accounts).toHaveLength(1);
    expect(
      await db.query('select id from projects where account_id not in (select id from accounts)'),
    ).toEqual([]);
  });
});
