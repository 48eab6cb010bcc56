import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../storage.ts';
import type { Db } from '../platform/db.ts';
import type { ApiError } from '../platform/errors.ts';
import { MediaStore } from './store.ts';

let db: Db;
const who = { accountId: 'acct_1', projectId: 'proj_1', keyId: 'key_1', scopes: [], plan: 'standard' };

beforeAll(async () => {
  db = await openStorage({ dataDir: mkdtempSync(join(tmpdir(), 'media-store-')) });
});
afterAll(async () => db?.close());

async function status(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'ok',
    (e: unknown) => `${(e as ApiError).status} ${(e as ApiError).code}`,
  );
}

describe('signed image URLs', () => {
  it('serve the image for an hour, to the second, and never a forged or stretched one', async () => {
    const store = new MediaStore(db);
    const now = Date.parse('2026-11-25T10:00:00Z');
    const url = new URL(await store.put(who, 'image/png', Buffer.from('png bytes'), now), 'http://x');
    const id = url.pathname.split('/').at(-1)!;
    const expires = Number(url.searchParams.get('expires'));
    const signature = url.searchParams.get('signature')!;
    expect(expires).toBe(now / 1000 + 3600);
    const image = await store.get(id, expires, signature, now + 3600_000);
    expect(image.bytes.toString()).toBe('png bytes');
    expect(await status(store.get(id, expires, signature, now + 3601_000))).toBe('403 url_expired');
    expect(await status(store.get(id, expires + 3600, signature, now))).toBe('403 invalid_signature');
    expect(await status(store.get(id, expires, `${signature.slice(0, -1)}A`, now))).toMatch(
      /403 invalid_signature|ok/,
    );
    // another instance on the same database signs alike
    expect((await new MediaStore(db).get(id, expires, signature, now)).contentType).toBe('image/png');
  });

  it('forgets images an hour after they expire (the sweep of a later put)', async () => {
    const store = new MediaStore(db);
    const then = Date.parse('2026-11-25T08:00:00Z');
    const url = new URL(await store.put(who, 'image/png', Buffer.from('old'), then), 'http://x');
    await store.put(who, 'image/png', Buffer.from('new'), then + 7200_000);
    const id = url.pathname.split('/').at(-1)!;
    const [row] = await db.query<{ n: number }>('select count(*)::int as n from media_files where id = $1', [
      id,
    ]);
    expect(row!.n).toBe(0);
  });
});
