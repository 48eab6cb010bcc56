// Imports listings from a JSON Lines file into the directory's database (directory/import.ts
// says how): DATABASE_URL or DATA_DIR select the database.
//
//   node src/services/import-listings.ts FILE.jsonl
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config.ts';
import { importListings } from '../directory/import.ts';
import { openStorage } from '../storage.ts';

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node src/services/import-listings.ts FILE.jsonl');
    process.exit(2);
  }
  const config = loadConfig();
  const db = await openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const started = performance.now();
  const result = await importListings(db, file);
  await db.close();
  if (result.errors.length) {
    for (const e of result.errors.slice(0, 100)) console.error(`line ${e.line}: ${e.errors.join('; ')}`);
    if (result.errors.length > 100) console.error(`... and ${result.errors.length - 100} more bad lines`);
    console.error(`${result.errors.length} bad line(s); nothing was imported.`);
    process.exit(1);
  }
  console.log(
    `imported ${result.imported} listings in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}
