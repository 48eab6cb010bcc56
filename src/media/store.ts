// Generated images behind signed URLs: the bytes are kept in the database (so every instance can
// serve them) for one hour, and a URL names the image, its expiry and an HMAC-SHA256 of both
// under a key made once per database. Without the key nobody can make or stretch a URL; with the
// URL anyone can fetch the image, as with a cloud store's pre-signed links.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../platform/db.ts';
import { ApiError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { Principal } from '../platform/principal.ts';

export const URL_LIFETIME_SECONDS = 3600;
const SWEEP_EVERY_MS = 60_000;

export interface StoredImage {
  contentType: string;
  bytes: Buffer;
  expires: number;
}

export class MediaStore {
  readonly #db: Db;
  #key: Promise<Buffer> | undefined;
  #lastSweep = 0;

  constructor(db: Db) {
    this.#db = db;
  }

  /** The database's signing key, made by the first instance that needs it. */
  #signingKey(): Promise<Buffer> {
    this.#key ??= (async () => {
      await this.#db.query(
        'insert into media_signing_keys (id, secret) values (1, $1) on conflict (id) do nothing',
        [randomBytes(32).toString('hex')],
      );
      const rows = await this.#db.query<{ secret: string }>(
        'select secret from media_signing_keys where id = 1',
      );
      return Buffer.from((rows[0] as { secret: string }).secret, 'hex');
    })();
    this.#key.catch(() => {
      this.#key = undefined;
    });
    return this.#key;
  }

  async #signature(id: string, expires: number): Promise<string> {
    return createHmac('sha256', await this.#signingKey())
      .update(`${id}.${expires}`)
      .digest('base64url');
  }

  /** Keeps an image for an hour; returns the path and query of its signed URL. */
  async put(principal: Principal, contentType: string, bytes: Buffer, now = Date.now()): Promise<string> {
    const id = newId('img');
    const created = Math.floor(now / 1000);
    const expires = created + URL_LIFETIME_SECONDS;
    await this.#db.query(
      'insert into media_files (id, account_id, project_id, content_type, bytes, created, expires) values ($1, $2, $3, $4, $5, $6, $7)',
      [id, principal.accountId, principal.projectId, contentType, bytes, created, expires],
    );
    if (now - this.#lastSweep > SWEEP_EVERY_MS) {
      this.#lastSweep = now;
      await this.#db.query('delete from media_files where expires < $1', [created]);
    }
    return `/v1/images/files/${id}?expires=${expires}&signature=${await this.#signature(id, expires)}`;
  }

  /** The image a signed URL names: 403 for a bad signature or an expired URL, 404 when it is gone. */
  async get(id: string, expires: number, signature: string, now = Date.now()): Promise<StoredImage> {
    const expected = Buffer.from(await this.#signature(id, expires));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new ApiError(
        403,
        'invalid_signature',
        'The signature of this image URL does not match: use the URL exactly as it was given.',
        { param: 'signature' },
      );
    }
    if (Math.floor(now / 1000) > expires) {
      throw new ApiError(
        403,
        'url_expired',
        'This image URL has expired (they are valid for one hour); generate the image again.',
        { param: 'expires' },
      );
    }
    const rows = await this.#db.query<{ content_type: string; bytes: Uint8Array; expires: string | number }>(
      'select content_type, bytes, expires from media_files where id = $1',
      [id],
    );
    const row = rows[0];
    if (row === undefined) throw new NotFoundError('image_not_found', `No image ${id} is kept any more.`);
    return { contentType: row.content_type, bytes: Buffer.from(row.bytes), expires: Number(row.expires) };
  }
}
