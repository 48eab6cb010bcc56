import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'contract-tests/**/*.test.ts', 'docs/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    // A JUnit report too, beside schemathesis's (test-results/): scripts/test-summary.ts sums them.
    reporters: ['default', 'junit'],
    outputFile: { junit: 'test-results/vitest.xml' },
  },
});
