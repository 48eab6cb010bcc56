// Bundles the console's browser code (src/console/web/router.ts, its pages and the generated SDK they use) into
// generated/console/app.js with esbuild, minified, no source map: the file is committed, so
// `npm start` serves it with no build step, and `npm run generate:check` fails when it is stale.
// esbuild's output is deterministic for one version (pinned in package.json).
import { build } from 'esbuild';

await build({
  entryPoints: ['src/console/web/router.ts'],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  platform: 'browser',
  legalComments: 'none',
  charset: 'utf8',
  outfile: 'generated/console/app.js',
  logLevel: 'warning',
});
