// Regenerates everything derived from the specs and fails if the result differs from what is
// committed: generated code and docs only ever come from the generator.
import { execFileSync } from 'node:child_process';

execFileSync('node', ['scripts/generate.ts'], { stdio: 'inherit' });
// Compared with the index, so a staged regeneration counts as committed; new files count too.
const paths = ['generated', 'docs/reference'];
const git = (args: string[]) => execFileSync('git', args, { encoding: 'utf8' });
const drift = [
  git(['diff', '--name-only', '--', ...paths]),
  git(['ls-files', '--others', '--exclude-standard', '--', ...paths]),
].join('');
if (drift.trim()) {
  console.error(`generate:check: generated files differ from the specs; run \`npm run generate\`:\n${drift}`);
  execFileSync('git', ['--no-pager', 'diff', '--stat', '--', 'generated', 'docs/reference'], {
    stdio: 'inherit',
  });
  process.exit(1);
}
console.log('generate:check: generated/ and docs/reference/ match the specs');
