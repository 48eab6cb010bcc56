import { relative } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that measure time against the machine's speed (a job woken within 400 ms, a burst cut at
 * a rate, a held connection dropped within its timeout): they run after the others, one at a time,
 * so no other file's load is in their figures. Every other file runs beside others: it takes its
 * own ports (0, or freePort()), databases (startTestServers, createTestDatabase, PGlite in memory),
 * files (mkdtemp) and Redis keys, and asserts nothing about another file's.
 */
export const ALONE = [
  'src/platform/jobs.test.ts',
  'src/model/engines/reference.test.ts',
  'contract-tests/scale-out.test.ts',
  'contract-tests/slow-clients.test.ts',
  // its 504s are timed against the upstream's delays (1.4 s)
  'contract-tests/upstream-chain.test.ts',
  // health checks timed (500 ms) while the worst cases run: another file's load would be in them
  'contract-tests/worst-cases.test.ts',
];

/**
 * The slowest files, slowest first (seconds each took in a full `npm test`, 2026-11-27): they start
 * first, so that no long file starts near the end and leaves the other workers idle while it runs.
 * A fresh clone has no timings of its own (vitest keeps them in node_modules/.vite), and vitest
 * would otherwise start the largest files first, whatever they wait on. Files that wait for the
 * Python venv (openai-*-python) are not here: begun first, they would wait on pip.
 */
export const SLOWEST = [
  'contract-tests/campaigns-durability.test.ts', // 186 s
  'contract-tests/concierge-mail.test.ts', // 166 s
  'contract-tests/concierge-durability.test.ts', // 142 s
  'docs/guides.test.ts', // 125 s
  'contract-tests/campaigns.test.ts', // 123 s
  'contract-tests/webhooks-durability.test.ts', // 114 s
  'contract-tests/webhooks.test.ts', // 111 s
  'contract-tests/crm.test.ts', // 108 s
  'contract-tests/first-run.test.ts', // 97 s
  'contract-tests/media.test.ts', // 91 s
  'contract-tests/account-limits.test.ts', // 69 s
  'contract-tests/account-data.test.ts', // 68 s
  'src/demo-cache.test.ts', // 67 s
  'contract-tests/error-statuses.test.ts', // 65 s
  'contract-tests/console.test.ts', // 63 s
  'contract-tests/console-browser.test.ts', // 60 s
  'contract-tests/workers.test.ts', // 60 s
  'contract-tests/mcp.test.ts', // 59 s
  'contract-tests/sales-first-campaign.test.ts', // 57 s
  'contract-tests/concierge.test.ts', // 53 s
  'src/platform/jobs-instances.test.ts', // 52 s
  'contract-tests/target-lists.test.ts', // 46 s
  'contract-tests/console-account-browser.test.ts', // 46 s
  'contract-tests/responses-background.test.ts', // 43 s
  'contract-tests/terminal-output.test.ts', // 40 s
];

/** Vitest's order (projects by group, then the largest files first), the SLOWEST before the rest. */
class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const order = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = SLOWEST.indexOf(relative(file.project.config.root, file.moduleId));
      return at < 0 ? SLOWEST.length : at;
    };
    const group = (file: TestSpecification) => file.project.config.sequence.groupOrder;
    return order
      .map((file, at) => ({ file, at }))
      .sort((a, b) => group(a.file) - group(b.file) || rank(a.file) - rank(b.file) || a.at - b.at)
      .map(({ file }) => file);
  }
}

const INCLUDE = ['src/**/*.test.ts', 'contract-tests/**/*.test.ts', 'docs/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    // a suite's servers start while other files run: up to the 180 s startTestServers waits
    hookTimeout: 240_000,
    // Three files at a time, beside schemathesis (scripts/test.ts), on two cores: most files wait
    // on servers, timers and child processes more than they compute (webhooks.test.ts used 55 s
    // of CPU in 122 s, campaigns-durability.test.ts 50 s in 215 s). VITEST_MAX_WORKERS=1 runs
    // one at a time.
    maxWorkers: Number(process.env.VITEST_MAX_WORKERS ?? 3),
    sequence: { sequencer: SlowestFirst },
    // A JUnit report too, beside schemathesis's (test-results/): scripts/test-summary.ts sums them.
    reporters: ['default', 'junit'],
    outputFile: { junit: 'test-results/vitest.xml' },
    projects: [
      {
        extends: true,
        test: { name: 'parallel', include: INCLUDE, exclude: [...configDefaults.exclude, ...ALONE] },
      },
      {
        extends: true,
        test: { name: 'alone', include: ALONE, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
