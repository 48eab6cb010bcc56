// The last lines of `npm test`: what ran and how it ended, summed from the JUnit reports the
// run wrote (vitest, schemathesis per API and storage, the official Python SDK's pytest suite).
//
//   node scripts/test-summary.ts start   marks the start of a run (reports older are ignored)
//   node scripts/test-summary.ts         prints the summary; exits 1 when a report holds a failure
//                                        or when no report was written since the start
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const DIR = 'test-results';
const MARK = join(DIR, '.started');

if (process.argv[2] === 'start') {
  mkdirSync(DIR, { recursive: true });
  writeFileSync(MARK, new Date().toISOString());
  process.exit(0);
}

const since = existsSync(MARK) ? statSync(MARK).mtimeMs : 0;

function reports(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return reports(path);
    return entry.name.endsWith('.xml') && statSync(path).mtimeMs >= since ? [path] : [];
  });
}

interface Counts {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
}

/** The counts of a JUnit report: the sum of its <testsuite>s (each says what it skipped). */
function countsOf(xml: string): Counts {
  const total: Counts = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  const tags = xml.match(/<testsuite\b[^>]*>/g) ?? xml.match(/<testsuites\b[^>]*>/g) ?? [];
  for (const tag of tags) {
    for (const key of Object.keys(total) as (keyof Counts)[]) {
      const m = new RegExp(`\\b${key}="(\\d+)"`).exec(tag);
      total[key] += m ? Number(m[1]) : 0;
    }
  }
  return total;
}

const files = reports(DIR).sort();
const total: Counts = { tests: 0, failures: 0, errors: 0, skipped: 0 };
console.log('');
console.log(`== test summary: ${files.length} JUnit report(s) written by this run ==`);
for (const file of files) {
  const c = countsOf(readFileSync(file, 'utf8'));
  for (const key of Object.keys(total) as (keyof Counts)[]) total[key] += c[key];
  const passed = c.tests - c.failures - c.errors - c.skipped;
  console.log(
    `${relative(DIR, file).padEnd(44)} ${c.tests} tests: ${passed} passed, ${c.failures + c.errors} failed, ${c.skipped} skipped`,
  );
}
const passed = total.tests - total.failures - total.errors - total.skipped;
const failed = total.failures + total.errors;
console.log(`${total.tests} tests in all`);
// The closing line CI reads: 'N passed, N failed' alone on a line, ', N skipped' after it and one
// word with a colon before it, nothing else (a trailing ', N total' makes it unreadable).
console.log(`Tests: ${passed} passed, ${failed} failed, ${total.skipped} skipped`);
if (files.length === 0) {
  console.log('no test report was written: nothing ran');
  process.exit(1);
}
process.exit(failed > 0 ? 1 : 0);
