// Opt-outs that outlive an erased account (suppression_hashes, issue 29), kept as keyed hashes:
// HMAC-SHA256, under a key of its own derived from the secrets key, of the address's SHA-256. A
// copy of the table alone gives no address back to whoever hashes a list of addresses. Hashing
// the SHA-256 (not the address) lets a row kept before the key (`sha256`: the address's SHA-256
// alone, as 0711 stored them, or as erasure stores them while no secrets key is set) be keyed
// later without its address: the first start with a key does it (upgradeOptOutHashes).
import { createHash } from 'node:crypto';
import type { Db, Queryable } from '../platform/db.ts';
import type { Logger } from '../platform/logger.ts';
import type { SecretBox } from '../platform/secrets.ts';

const PURPOSE = 'suppression hash';
const BATCH = 500;

export type HashForm = 'hmac-sha256' | 'sha256';

/** The SHA-256 of a lower-case address, in hex. */
const sha256 = (email: string) => createHash('sha256').update(email, 'utf8').digest('hex');

const keyedOf = (box: SecretBox, sha: string) => box.mac(PURPOSE, sha).toString('hex');

/** Names the key the hashes were made with (not the key), so a changed key is told, not missed. */
export const hashKeyId = (box: SecretBox) => box.mac(`${PURPOSE} key id`, '').subarray(0, 8).toString('hex');

/** The hashes to look a lower-case address up by: keyed (when there is a key) and the older form. */
export function optOutHashes(
  box: SecretBox | undefined,
  email: string,
): { keyed: string | null; plain: string } {
  const plain = sha256(email);
  return { keyed: box === undefined ? null : keyedOf(box, plain), plain };
}

/** Keeps the opt-out of a lower-case address from a sending domain (in `q`, the caller's transaction). */
export async function keepOptOut(
  q: Queryable,
  box: SecretBox | undefined,
  domain: string,
  email: string,
  reason: string,
  now: number,
): Promise<void> {
  const { keyed, plain } = optOutHashes(box, email);
  await q.query(
    `insert into suppression_hashes (domain, email_hash, hash_form, key_id, reason, created)
     values ($1, $2, $3, $4, $5, $6) on conflict (domain, email_hash) do nothing`,
    [
      domain.toLowerCase(),
      keyed ?? plain,
      keyed === null ? 'sha256' : 'hmac-sha256',
      box === undefined ? null : hashKeyId(box),
      reason,
      now,
    ],
  );
}

/**
 * Keys the rows kept without a key (`sha256`), in batches; idempotent, and safe beside another
 * instance doing the same (each row moves in one statement that finds it unkeyed). Tells the
 * operator about rows that stay unchecked: unkeyed for want of a key, or keyed under another one.
 */
export async function upgradeOptOutHashes(
  db: Db,
  box: SecretBox | undefined,
  logger: Logger,
): Promise<{ keyed: number; unkeyed: number; otherKey: number }> {
  let keyed = 0;
  if (box !== undefined) {
    const keyId = hashKeyId(box);
    for (;;) {
      const rows = await db.query<{ domain: string; email_hash: string }>(
        `select domain, email_hash from suppression_hashes where hash_form = 'sha256' limit ${BATCH}`,
      );
      for (const row of rows) {
        // one statement: the unkeyed row goes and its keyed form comes (or joins one kept since)
        await db.query(
          `with old as (
             delete from suppression_hashes where domain = $1 and email_hash = $2 and hash_form = 'sha256'
             returning domain, reason, created)
           insert into suppression_hashes (domain, email_hash, hash_form, key_id, reason, created)
           select domain, $3, 'hmac-sha256', $4, reason, created from old
           on conflict (domain, email_hash) do nothing`,
          [row.domain, row.email_hash, keyedOf(box, row.email_hash), keyId],
        );
      }
      keyed += rows.length;
      if (rows.length < BATCH) break;
    }
  }
  const [counts] = await db.query<{ unkeyed: string | number; other_key: string | number }>(
    `select count(*) filter (where hash_form = 'sha256') as unkeyed,
            count(*) filter (where hash_form = 'hmac-sha256' and key_id is distinct from $1) as other_key
     from suppression_hashes`,
    [box === undefined ? null : hashKeyId(box)],
  );
  const unkeyed = Number(counts?.unkeyed ?? 0);
  const otherKey = Number(counts?.other_key ?? 0);
  if (keyed > 0) logger.info({ keyed }, 'opt-outs of erased accounts re-hashed with the secrets key');
  if (unkeyed > 0) {
    logger.warn(
      { unkeyed },
      'opt-outs of erased accounts are kept as plain SHA-256 hashes: set SECRETS_KEY_FILE or SECRETS_ENCRYPTION_KEY, and the next start keys them',
    );
  }
  if (otherKey > 0) {
    logger.error(
      { other_key: otherKey },
      'opt-outs of erased accounts were hashed under a secrets key this process does not have and cannot be checked: restore that key',
    );
  }
  return { keyed, unkeyed, otherKey };
}
