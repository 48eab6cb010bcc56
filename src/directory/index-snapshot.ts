// The search index's snapshot file (SEARCH_INDEX_SNAPSHOT), written after the start-up load asked
// for one (vectors.ts), once the service has said ready. It is written in pieces through the
// thread pool (memory-index/snapshot.ts), so requests are served meanwhile; loads of listings
// added since wait until it is written (it is of the index as it was when it began).
import type { Queryable } from '../platform/db.ts';
import { writeSnapshot, type WriteOptions } from './memory-index/snapshot.ts';
import { identityOf, indexOf, SNAPSHOT_DUE } from './vectors.ts';

/** Writes the snapshot the start-up load asked for, as the index is now; its bytes, or why not. */
export async function writeIndexSnapshot(
  db: Queryable,
  options: WriteOptions = {},
): Promise<number | string | undefined> {
  const index = indexOf(db);
  const origin = index.origin;
  while (origin?.written === SNAPSHOT_DUE && index.snapshot) {
    const maxSeq = index.shared.maxSeq;
    const identity = await identityOf(db, maxSeq);
    // a load meanwhile: the identity would not describe what is written
    if (index.refreshing || index.shared.maxSeq !== maxSeq) await index.refreshing;
    else {
      // held as a load is: the index does not change while it is written
      const writing = writeSnapshot(index.shared, index.snapshot, identity, options).then(
        (bytes) => {
          origin.written = bytes;
        },
        (err: unknown) => {
          origin.written = (err as Error).message;
        },
      );
      index.refreshing = writing;
      try {
        await writing;
      } finally {
        if (index.refreshing === writing) index.refreshing = undefined;
      }
    }
  }
  return origin?.written;
}
