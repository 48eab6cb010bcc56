// Keeps what each listing's row derives from code in step with this build: its embedding (the
// embedding engine's vector) and the words `tsv` holds beside its own (its trade's words in the
// thesaurus's languages). When either changes (a new thesaurus, a new language, the rotation
// that made short prefixes meaningful), rows stored by the old code no longer compare with the
// new code's queries: semantic search would silently rank noise, and keyword search would miss
// the trade in the new language. At start-up, before the indexes load, a directory whose
// `embedding_version` or `keyword_version` differs from this build's is brought up to date
// from the stored profiles, in batches (one statement each; an interrupted run goes on from its
// last batch at the next start). A directory filled by this build holds its versions already (store.ts).
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

/**
 * From this many listings the rewrite sets the listings' secondary indexes aside and builds them
 * after: every rewritten row is a new version in all nine of them (tsv is indexed, so no update
 * is HOT), about 1 ms of PostgreSQL's CPU a listing, 20 minutes a million; one build each after
 * is about a minute a million.
 */
export const SET_INDEXES_ASIDE_FROM = 50_000;

/** Where a rewrite left off (directory_meta): an interrupted run goes on from there. */
interface Progress {
  to: string;
  vectors: boolean;
  words: boolean;
  after: number;
}

/** Recomputes every listing's embedding and `tsv` where the stored versions are not this build's. */
export async function ensureEmbeddings(
  db: Db,
  onProgress?: (done: number, total: number) => void,
  options: { setIndexesAsideFrom?: number } = {},
): Promise<Rederived> {
  const meta = new Map(
    (
      await db.query<{ key: string; value: string }>(
        `select key, value from directory_meta
         where key in ('embedding_version', 'keyword_version', 'rederive_progress')`,
      )
    ).map((r) => [r.key, r.value]),
  );
  const from = meta.get('embedding_version') ?? null;
  const vectors = from !== EMBEDDING_VERSION;
  // a directory from before keyword_version holds the first words (seven languages)
  const words = (meta.get('keyword_version') ?? 'trade-words-1') !== KEYWORD_VERSION;
  if (!vectors && !words) {
    await restoreIndexes(db); // a run stopped between its last batch and its versions
    return { reembedded: 0, reindexed: 0, from };
  }
  const to = `${EMBEDDING_VERSION}/${KEYWORD_VERSION}`;
  const left = meta.get('rederive_progress');
  const resumed = left ? (JSON.parse(left) as Progress) : undefined;
  let after =
    resumed && resumed.to === to && resumed.vectors === vectors && resumed.words === words
      ? resumed.after
      : 0;
  const [counts] = await db.query<{ total: number; done: number }>(
    'select count(*)::int as total, (count(*) filter (where seq <= $1))::int as done from listings',
    [after],
  );
  const total = counts?.total ?? 0;
  let done = counts?.done ?? 0;
  if (total >= (options.setIndexesAsideFrom ?? SET_INDEXES_ASIDE_FROM)) await setIndexesAside(db);
  for (;;) {
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
    await setMeta(
      db,
      ['rederive_progress'],
      [JSON.stringify({ to, vectors, words, after } satisfies Progress)],
    );
    onProgress?.(done, Math.max(total, done));
  }
  await restoreIndexes(db);
  await setMeta(db, ['embedding_version', 'keyword_version'], [EMBEDDING_VERSION, KEYWORD_VERSION]);
  await db.query(`delete from directory_meta where key = 'rederive_progress'`);
  return { reembedded: vectors ? done : 0, reindexed: words ? done : 0, from };
}

async function setMeta(db: Db, keys: string[], values: string[]): Promise<void> {
  await db.query(
    `insert into directory_meta (key, value) select k, v from unnest($1::text[], $2::text[]) as t(k, v)
     on conflict (key) do update set value = excluded.value`,
    [keys, values],
  );
}

/**
 * Drops the listings' secondary indexes (not the keys' own), their definitions kept first in
 * directory_meta, so that a run stopped half-way builds them at its next start.
 */
async function setIndexesAside(db: Db): Promise<void> {
  const indexes = await db.query<{ indexname: string; indexdef: string }>(
    `select indexname, indexdef from pg_indexes
     where schemaname = current_schema() and tablename = 'listings'
       and indexname not in (select conname from pg_constraint where conrelid = 'listings'::regclass)`,
  );
  if (indexes.length === 0) return;
  // a second run (one stopped before) keeps the first one's list: it holds every index
  await db.query(
    `insert into directory_meta (key, value) values ('rederive_indexes', $1) on conflict (key) do nothing`,
    [JSON.stringify(indexes.map((i) => i.indexdef))],
  );
  for (const { indexname } of indexes) await db.query(`drop index if exists "${indexname}"`);
}

/** Builds the indexes a rewrite set aside, if any. */
async function restoreIndexes(db: Db): Promise<void> {
  const [row] = await db.query<{ value: string }>(
    `select value from directory_meta where key = 'rederive_indexes'`,
  );
  if (!row) return;
  for (const definition of JSON.parse(row.value) as string[]) {
    await db.query(definition.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX IF NOT EXISTS '));
  }
  await db.query(`analyze listings`);
  await db.query(`delete from directory_meta where key = 'rederive_indexes'`);
}
