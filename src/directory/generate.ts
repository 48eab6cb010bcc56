// Writes demo listings as JSON Lines in the import format (the API's Listing), for benchmarks
// and for trying the import. Streams: memory stays flat at any count.
//
//   node src/directory/generate.ts OUT.jsonl [COUNT=1000000] [SEED=eurus-bench]
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { demoListing } from './demo.ts';
import { toListing } from './store.ts';

export async function writeListings(
  out: NodeJS.WritableStream,
  count: number,
  seed: string | number,
  onProgress?: (written: number) => void,
): Promise<void> {
  const now = new Date();
  for (let i = 0; i < count; i++) {
    const listing = toListing(demoListing(seed, i), now, { baseUrl: 'https://directory.api.eurus.eu' });
    if (!out.write(`${JSON.stringify(listing)}\n`)) await once(out, 'drain');
    if (onProgress && (i + 1) % 100_000 === 0) onProgress(i + 1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, count = '1000000', seed = 'eurus-bench'] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node src/directory/generate.ts OUT.jsonl [COUNT] [SEED]');
    process.exit(2);
  }
  const out = createWriteStream(file);
  const started = performance.now();
  await writeListings(out, Number(count), seed, (n) => console.error(`${n} listings`));
  out.end();
  await once(out, 'finish');
  console.error(
    `wrote ${count} listings to ${file} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}
