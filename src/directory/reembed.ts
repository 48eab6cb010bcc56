// Keeps what each listing's row derives from code in step with this build: its embedding (the
// embedding engine's vector) and the words `tsv` holds beside its own (its trade's words in the
// thesaurus's languages). When either changes (a new thesaurus, a new language, the rotation
// that made short prefixes meaningful), rows stored by the old code no longer compare with the
// new code's queries: semantic search would silently rank noise, and keyword search would miss
// the trade in the new language. At start-up, before the indexes load, a directory whose
// `embedding_version` or `keyword_version` differs from this build's is brought up to date
// from the stored profiles, in batches (one statement each; an interrupted run starts over at
// the next start). A directory filled by this build holds its versions already (store.ts).
import type { Db } from '../platform/db.ts';
import type { ListingRecord } from './store.ts';
import {
  EMBEDDING_DIMENSIONS,
  EMBEDDING_VERSION,
  embeddingText,
  KEYWORD_VERSION,
  quantize,
  tsvInputs,
  tsvSql,
} from './store.ts';
import { embedOne } from '../embeddings/index.ts';

export { EMBEDDING_VERSION, KEYWORD_VERSION } from './store.ts';

const BATCH = 1000;

type Profile = Pick<ListingRecord, 'name' | 'legal_name' | 'activities' | 'description' | 'languages'>;

export interface Rederived {
  /** listings whose embedding was recomputed */
  reembedded: number;
  /** listings whose `tsv` was recomputed */
  reindexed: number;
  /** the embedding engine the directory held, null for none */
  from: string | null;
}

/** Recomputes every listing's embedding and `tsv` where the stored versions are not this build's. */
export async function ensureEmbeddings(db: Db, onProgress?: (done: number) => void): Promise<Rederived> {
  const meta = new Map(
    (
      await db.query<{ key: string; value: string }>(
        `select key, value from directory_meta where key in ('embedding_version', 'keyword_version')`,
      )
    ).map((r) => [r.key, r.value]),
  );
  const from = meta.get('embedding_version') ?? null;
  const vectors = from !== EMBEDDING_VERSION;
  // a directory from before keyword_version holds the first words (seven languages)
  const words = (meta.get('keyword_version') ?? 'trade-words-1') !== KEYWORD_VERSION;
  let done = 0;
  let after = 0;
  while (vectors || words) {
    const rows = await db.query<{ seq: number; profile: Profile }>(
      `select seq, jsonb_build_object('name', profile->'name', 'legal_name', profile->'legal_name',
         'activities', profile->'activities', 'description', profile->'description',
         'languages', profile->'languages') as profile
       from listings where seq > $1 order by seq limit ${BATCH}`,
      [after],
    );
    if (rows.length === 0) break;
    const seqs = rows.map((r) => Number(r.seq));
    // one statement a batch (row by row, a million took 12 minutes on PostgreSQL, 17 on PGlite);
    // the vectors travel as hex text, which both drivers pass the same way
    const params: unknown[] = [seqs];
    const columns = ['unnest($1::bigint[]) as seq'];
    const sets: string[] = [];
    if (vectors) {
      params.push(
        rows.map((r) => {
          const v = quantize(embedOne(embeddingText(r.profile), EMBEDDING_DIMENSIONS));
          return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
        }),
      );
      columns.push(`decode(unnest($${params.length}::text[]), 'hex') as embedding`);
      sets.push('embedding = v.embedding');
    }
    if (words) {
      const inputs = rows.map((r) => tsvInputs(r.profile));
      for (let i = 0; i < inputs[0]!.length; i++) {
        params.push(inputs.map((row) => row[i]));
        columns.push(`unnest($${params.length}::text[]) as t${i}`);
      }
      sets.push(`tsv = ${tsvSql((i) => `v.t${i}`)}`);
    }
    await db.query(
      `update listings l set ${sets.join(', ')} from (select ${columns.join(', ')}) v where l.seq = v.seq`,
      params,
    );
    after = seqs[seqs.length - 1] ?? after;
    done += rows.length;
    onProgress?.(done);
  }
  await db.query(
    `insert into directory_meta (key, value) select k, v from unnest($1::text[], $2::text[]) as t(k, v)
     on conflict (key) do update set value = excluded.value`,
    [
      ['embedding_version', 'keyword_version'],
      [EMBEDDING_VERSION, KEYWORD_VERSION],
    ],
  );
  return { reembedded: vectors ? done : 0, reindexed: words ? done : 0, from };
}
