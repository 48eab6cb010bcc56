// The search index's snapshot file (SEARCH_INDEX_SNAPSHOT), written after the start-up load asked
// for one (vectors.ts): writing holds the owner's thread a moment (26 MB for 20,000 listings), so
// the service does it once it has said ready, not before.
import type { Queryable } from '../platform/db.ts';
import { writeSnapshot } from './memory-index/snapshot.ts';
import { identityOf, indexOf, SNAPSHOT_DUE } from './vectors.ts';

/** Writes the snapshot the start-up load asked for, as the index is now; its bytes, or why not. */
export async function writeIndexSnapshot(db: Queryable): Promise<number | string | undefined> {
  const index = indexOf(db);
  const origin = index.origin;
  while (origin?.written === SNAPSHOT_DUE && index.snapshot) {
    const maxSeq = index.shared.maxSeq;
    const identity = await identityOf(db, maxSeq);
    // a load meanwhile: the identity would not describe what is written
    if (index.refreshing || index.shared.maxSeq !== maxSeq) await index.refreshing;
    else
      try {
        origin.written = writeSnapshot(index.shared, index.snapshot, identity);
      } catch (err) {
        origin.written = (err as Error).message;
      }
  }
  return origin?.written;
}
