// Keeps the stored embeddings in step with the embedding engine. Every listing's vector is
// derived data: when the engine changes (a new thesaurus, the rotation that made short prefixes
// meaningful), vectors stored by the old one no longer compare with the new one's queries, and
// semantic search would silently rank noise. At start-up, before the vector index loads, a
// directory whose `embedding_version` differs is re-embedded from the stored profiles, in
// batches (one statement each; an interrupted run starts over at the next start).
import type { Db } from '../platform/db.ts';
import type { ListingRecord } from './store.ts';
import { EMBEDDING_DIMENSIONS, embeddingText, quantize } from './store.ts';
import { embedOne } from '../embeddings/index.ts';

/** The engine of this build. Change it whenever `embedOne` gives different vectors. */
export const EMBEDDING_VERSION = 'thesaurus-3';

const BATCH = 1000;

/** Re-embeds every listing when the stored version is not this build's; returns how many. */
export async function ensureEmbeddings(
  db: Db,
  onProgress?: (done: number) => void,
): Promise<{ reembedded: number; from: string | null }> {
  const [row] = await db.query<{ value: string }>(
    `select value from directory_meta where key = 'embedding_version'`,
  );
  const from = row?.value ?? null;
  if (from === EMBEDDING_VERSION) return { reembedded: 0, from };
  let after = 0;
  let done = 0;
  for (;;) {
    const rows = await db.query<{
      seq: number;
      profile: Pick<ListingRecord, 'name' | 'activities' | 'description'>;
    }>(
      `select seq, jsonb_build_object('name', profile->'name', 'activities', profile->'activities',
         'description', profile->'description') as profile
       from listings where seq > $1 order by seq limit ${BATCH}`,
      [after],
    );
    if (rows.length === 0) break;
    const seqs = rows.map((r) => Number(r.seq));
    const vectors = rows.map((r) => quantize(embedOne(embeddingText(r.profile), EMBEDDING_DIMENSIONS)));
    // one statement a batch (row by row, a million took 12 minutes on PostgreSQL, 17 on PGlite);
    // the vectors travel as hex text, which both drivers pass the same way
    await db.query(
      `update listings l set embedding = v.embedding
       from (select unnest($1::bigint[]) as seq, decode(unnest($2::text[]), 'hex') as embedding) v
       where l.seq = v.seq`,
      [seqs, vectors.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex'))],
    );
    after = seqs[seqs.length - 1] ?? after;
    done += rows.length;
    onProgress?.(done);
  }
  await db.query(
    `insert into directory_meta (key, value) values ('embedding_version', $1)
     on conflict (key) do update set value = excluded.value`,
    [EMBEDDING_VERSION],
  );
  return { reembedded: done, from };
}
