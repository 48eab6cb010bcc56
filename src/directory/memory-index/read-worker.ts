// Reads a snapshot's parts straight into the search index's shared buffers and sums their CRC,
// on a thread of its own (snapshot.ts): the thread that serves requests goes on starting the
// service meanwhile. Only Node's own modules: the thread starts in a few milliseconds.
import { open } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { crc32 } from 'node:zlib';

/** A run of the file read into `length` bytes of `buffer` at `offset`. */
export interface Piece {
  buffer: SharedArrayBuffer;
  offset: number;
  length: number;
  position: number;
}

export interface ReadJob {
  file: string;
  pieces: Piece[];
  /** the CRC of what comes before the pieces */
  crc: number;
  /** reads in flight at once */
  depth: number;
}

/** Every piece read whole, and the CRC over them; or why not. */
export type ReadOutcome = { crc: number } | { unreadable: string };

async function run(job: ReadJob): Promise<ReadOutcome> {
  const fh = await open(job.file, 'r');
  const reads: Promise<number>[] = [];
  try {
    const views = job.pieces.map((p) => new Uint8Array(p.buffer, p.offset, p.length));
    const issue = () => {
      const k = reads.length;
      reads.push(readAll(views[k]!, job.pieces[k]!.position));
    };
    const readAll = async (view: Uint8Array, position: number): Promise<number> => {
      let done = 0;
      while (done < view.length) {
        const { bytesRead } = await fh.read(view, done, view.length - done, position + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return done;
    };
    let crc = job.crc;
    for (let k = 0; k < views.length; k++) {
      while (reads.length < views.length && reads.length < k + job.depth) issue();
      const got = await reads[k]!;
      if (got !== views[k]!.length)
        return { unreadable: `${job.file}: ended at ${job.pieces[k]!.position + got}` };
      crc = crc32(views[k]!, crc);
    }
    return { crc };
  } finally {
    // nothing may be written into the index after the answer
    await Promise.allSettled(reads);
    await fh.close();
  }
}

run(workerData as ReadJob).then(
  (outcome) => parentPort!.postMessage(outcome),
  (err: unknown) => parentPort!.postMessage({ unreadable: String(err) } satisfies ReadOutcome),
);
