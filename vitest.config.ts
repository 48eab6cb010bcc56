import { configDefaults, defineConfig } from 'vitest/config';

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
];

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
