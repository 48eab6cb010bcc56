// The reference pages must render with no network: open each in headless Chromium with every
// non-file request blocked, wait for Redoc to draw the operations, and keep a screenshot.
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../contract-tests/support/browser.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const OUT = 'test-results/docs';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
  mkdirSync(OUT, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
});

function operationSummaries(api: string): string[] {
  const spec = JSON.parse(readFileSync(`generated/${api}/openapi.json`, 'utf8')) as {
    paths: Record<string, Record<string, { summary?: string }>>;
  };
  return Object.values(spec.paths).flatMap((item) =>
    Object.values(item)
      .map((op) => op.summary)
      .filter((s): s is string => typeof s === 'string'),
  );
}

describe.each(['model', 'directory'])('docs/reference/%s.html', (api) => {
  it('renders every operation offline, with nothing fetched from the network', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const external: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:') || url.startsWith('data:') || url.startsWith('blob:'))
        return route.continue();
      external.push(url);
      return route.abort();
    });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(pathToFileURL(resolve(`docs/reference/${api}.html`)).href);
    await page.waitForSelector('.api-content', { timeout: 30_000 });
    const text = (await page.locator('body').textContent()) ?? '';
    for (const summary of operationSummaries(api)) expect(text).toContain(summary);
    const file = `${OUT}/${api}.png`;
    await page.screenshot({ path: file, fullPage: false });
    expect(statSync(file).size).toBeGreaterThan(20_000);
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
