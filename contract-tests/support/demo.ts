// The demo directory's size in test servers and instances (DEMO_LISTINGS), unless a suite sets
// its own. `npm test` (scripts/test.ts) makes its demo cache first, so a PGlite start copies the
// listings instead of making them (src/demo-cache.ts).
export const TEST_DEMO_LISTINGS = '300';

/** The docs test's (docs/guides.test.ts): what `npm start` loads, so the guides find what they say. */
export const GUIDES_DEMO_LISTINGS = '20000';
