// `npm ci` (postinstall) and `node scripts/demo-cache.ts`: makes the demo directory once, as a
// first start would, and keeps it under node_modules/.cache (src/demo-cache.ts), so a first start
// copies it instead of making 20,000 listings. Never fails an install: without it a first start
// makes them as before. DEMO_LISTINGS (default 20,000; several sizes comma-separated) is the size
// it is made for.
import { existsSync } from 'node:fs';

const counts = (process.env['DEMO_LISTINGS'] ?? '20000').split(',').map((c) => Number(c.trim()));
for (const count of counts) {
  try {
    const { demoCacheFile } = await import('../src/demo-cache.ts');
    const { makeDemoCache } = await import('../src/demo-cache-make.ts');
    if (!Number.isInteger(count) || count <= 0)
      throw new Error(`DEMO_LISTINGS=${process.env['DEMO_LISTINGS']}`);
    const file = demoCacheFile(count);
    if (existsSync(file) && !process.argv.includes('--force')) console.log(`demo directory cache: ${file}`);
    else {
      const started = Date.now();
      await makeDemoCache(count, file);
      console.log(`demo directory cache made in ${Math.round((Date.now() - started) / 1000)} s: ${file}`);
    }
  } catch (err) {
    console.warn(
      `demo directory cache not made (a first start makes the listings): ${(err as Error).message}`,
    );
  }
}
