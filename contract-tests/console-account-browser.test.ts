// The console's Account page in a real browser (playwright-core driving Debian's chromium, as
// console-browser.test.ts does), issue 29: a person logs in, asks for an export and downloads
// the archive (theirs, not another account's, no secret), asks for erasure (a wrong password is
// refused, the right one schedules it), sees the grace period and cancels it. Each state is
// checked with axe-core and kept as a screenshot in test-results/console-account/.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './support/browser.ts';
import { lastLink } from './support/outbox.ts';
import { startTestServers, type TestServers } from './support/server.ts';

const OUT = 'test-results/console-account';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'lantern herons fold 9 paper maps';

interface AxeResult {
  violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown }> }>;
}

describe('the Account page in a browser', () => {
  let servers: TestServers;
  let base: string;
  let outbox: string;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];

  async function accessible(name: string): Promise<void> {
    await page.evaluate(AXE);
    const result = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as AxeResult;
    const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious.map((v) => `${name}: ${v.id} (${v.impact}) ${v.help}`)).toEqual([]);
  }

  async function shot(name: string): Promise<void> {
    const file = `${OUT}/${name}.png`;
    await page.screenshot({ path: file, fullPage: true });
    expect(statSync(file).size).toBeGreaterThan(5_000);
  }

  /** Signs a person up and verifies the address through the API; a key of theirs, made by session. */
  async function person(email: string): Promise<{ accountId: string; keyName: string; secret: string }> {
    const json = { 'content-type': 'application/json' };
    const signUp = await fetch(`${base}/v1/sign-ups`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(signUp.status).toBe(202);
    const token = new URL(lastLink(outbox, email, '/console/verify')).searchParams.get('token');
    const verified = await fetch(`${base}/v1/email-verifications`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ token }),
    });
    expect(verified.status).toBeLessThan(300);
    const login = await fetch(`${base}/v1/sessions`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(login.status).toBe(201);
    const cookie = /^([^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1]!;
    const s = (await login.json()) as { csrf_token: string; account_id: string };
    const keyName = `${email} key`;
    const key = await fetch(`${base}/v1/keys`, {
      method: 'POST',
      headers: { ...json, cookie, 'x-csrf-token': s.csrf_token },
      body: JSON.stringify({ name: keyName, scopes: ['chat'] }),
    });
    expect(key.status).toBe(201);
    const { secret } = (await key.json()) as { secret: string };
    await fetch(`${base}/v1/sessions/current`, {
      method: 'DELETE',
      headers: { cookie, 'x-csrf-token': s.csrf_token },
    });
    return { accountId: s.account_id, keyName, secret };
  }

  beforeAll(async () => {
    outbox = mkdtempSync(join(tmpdir(), 'eurus-console-account-'));
    servers = await startTestServers('pglite', {
      which: ['model'],
      env: { MAIL_OUTBOX_DIR: outbox, ERASURE_GRACE_PERIOD: '2d' },
    });
    base = servers.urls.model as string;
    mkdirSync(OUT, { recursive: true });
    browser = await launchChromium();
    const context = await browser.newContext({
      viewport: { width: 1200, height: 900 },
      acceptDownloads: true,
    });
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(base) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
      errors.push(`fetched ${url}`);
      return route.abort();
    });
    page = await context.newPage();
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('dialog', (dialog) => void dialog.accept()); // "Erase this account…?"
  });

  afterAll(async () => {
    await browser?.close();
    await servers?.stop();
    rmSync(outbox, { recursive: true, force: true });
  });

  it(
    'exports and downloads the archive, schedules the erasure and cancels it',
    { timeout: 180_000 },
    async () => {
      const ada = await person('ada.lovelace@example.eu');
      const other = await person('charles.babbage@example.eu');

      // A key without the admin scope can neither export nor erase the account.
      const chatKey = { authorization: `Bearer ${ada.secret}`, 'content-type': 'application/json' };
      const byKey = await fetch(`${base}/v1/account/exports`, { method: 'POST', headers: chatKey });
      expect(byKey.status).toBe(403);
      const eraseByKey = await fetch(`${base}/v1/account`, {
        method: 'DELETE',
        headers: chatKey,
        body: JSON.stringify({ confirm: ada.accountId, password: PASSWORD }),
      });
      expect(eraseByKey.status).toBe(403);

      // Log in as a person does.
      await page.goto(`${base}/console/login`);
      await page.getByLabel('Email').fill('ada.lovelace@example.eu');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'API keys' }).waitFor();
      await page.locator('#nav').getByRole('link', { name: 'Account' }).click();
      await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
      await accessible('account');
      await shot('1-account');

      // Export: the page builds the archive (a durable job), then offers the signed link.
      await page.getByRole('button', { name: 'Export my data' }).click();
      const link = page.getByRole('link', { name: 'download it (JSON)' });
      await link.waitFor({ timeout: 60_000 });
      const href = (await link.getAttribute('href')) ?? '';
      expect(href).toMatch(/\/v1\/account\/exports\/exp_\w+\/archive\?expires=\d+&signature=/);
      await accessible('export ready');
      await shot('2-export-ready');
      const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
      expect(download.suggestedFilename()).toMatch(/^eurus-account-exp_\w+\.json$/);
      const text = readFileSync((await download.path()) as string, 'utf8');
      const archive = JSON.parse(text) as { object: string; account_id: string; accounts: unknown };
      expect(archive.object).toBe('account_archive');
      expect(archive.account_id).toBe(ada.accountId);
      expect(text).toContain('ada.lovelace@example.eu');
      expect(text).toContain(ada.keyName);
      expect(text).not.toContain(ada.secret);
      expect(text).not.toContain(other.accountId);
      expect(text).not.toContain('charles.babbage@example.eu');
      // the link is the only credential: a forged signature finds nothing
      const url = new URL(href);
      const signature = url.searchParams.get('signature') ?? '';
      url.searchParams.set('signature', `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`);
      const forged = await fetch(url);
      expect(forged.status).toBe(404);

      // Erasure asks for the password again: a wrong one is refused, nothing is scheduled.
      await page.getByLabel('Your password').fill('not the password at all');
      await page.getByRole('button', { name: 'Erase my account' }).click();
      await expect.poll(() => page.locator('main [role="status"].error').textContent()).toMatch(/password/i);
      expect((await page.request.get(`${base}/v1/account/erasure`)).status()).toBe(404);

      // The right one schedules it: the page shows the grace period and how to cancel it.
      await page.getByLabel('Your password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Erase my account' }).click();
      const notice = page.getByText(/This account will be erased on /);
      await notice.waitFor();
      const scheduled = (await (await page.request.get(`${base}/v1/account/erasure`)).json()) as {
        status: string;
        erase_at: number;
      };
      expect(scheduled.status).toBe('scheduled');
      // two days of grace (ERASURE_GRACE_PERIOD), as the page says in the browser's own clock
      expect(scheduled.erase_at - Date.now() / 1000).toBeGreaterThan(2 * 86_400 - 120);
      const shown = await page.evaluate((s) => new Date(s * 1000).toLocaleString(), scheduled.erase_at);
      expect(await notice.textContent()).toContain(shown);
      // what will be kept, and why, as the planned receipt says
      await page.getByRole('heading', { name: 'What will be kept, and why' }).waitFor();
      const kept = await page.locator('ul.kept li').allTextContents();
      expect(kept.join('\n')).toMatch(/usage records.*:.*/);
      // during the grace period the account still works
      const chat = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ada.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'prince', messages: [{ role: 'user', content: 'Still here?' }] }),
      });
      expect(chat.status).toBe(200);
      await accessible('erasure scheduled');
      await shot('3-erasure-scheduled');

      // Reloaded, the page still shows it; cancelling brings the form back.
      await page.reload();
      await page.getByRole('button', { name: 'Cancel the erasure' }).click();
      await page.getByRole('button', { name: 'Erase my account' }).waitFor();
      expect(await page.getByText(/This account will be erased on /).count()).toBe(0);
      const cancelled = (await (await page.request.get(`${base}/v1/account/erasure`)).json()) as {
        status: string;
        cancelled_at: number | null;
      };
      expect(cancelled.status).toBe('cancelled');
      expect(cancelled.cancelled_at).not.toBeNull();
      await accessible('erasure cancelled');
      await shot('4-erasure-cancelled');
      expect(errors).toEqual([]);
    },
  );
});
