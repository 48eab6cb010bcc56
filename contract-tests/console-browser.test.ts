// The console in a real browser (playwright-core driving Debian's chromium, launched as the docs
// test launches it): sign up, read the verification mail from the outbox, verify, create a key
// with scopes of both services, copy it, call chat and search with it, see the calls in the
// usage chart (totals equal GET /v1/usage, and the CSV), rotate and revoke it (the next call is
// refused), log out and in. Every page is checked with axe-core (zero serious or critical
// violations) and kept as a screenshot in test-results/console/.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { launchChromium } from './support/browser.ts';
import { startTestDns, type TestDns } from './support/dns.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastLink } from './support/outbox.ts';
import { startTestServers, type TestServers } from './support/server.ts';

const OUT = 'test-results/console';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const EMAIL = 'grace.hopper@example.eu';
const PASSWORD = 'compilers debug 42 moths at dawn';

interface AxeResult {
  violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown }> }>;
}

/** A webhook receiver on loopback: keeps what arrives; answers 204, or 500 while `failing`. */
class Receiver {
  received: Array<{ headers: Record<string, string>; body: string }> = [];
  failing = false;
  #server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        this.received.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
        res
          .writeHead(this.failing ? 500 : 204)
          .end(this.failing ? 'receiver down for maintenance' : undefined);
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/eurus/events`;
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}

describe('the console in a browser', () => {
  const receiver = new Receiver();
  let dns: TestDns;
  let servers: TestServers;
  let base: string;
  let outbox: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];

  /** axe-core run in the page (evaluated over the DevTools protocol, so the page's CSP allows it). */
  async function accessible(name: string): Promise<void> {
    await page.evaluate(AXE);
    const result = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as AxeResult;
    const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(
      serious.map(
        (v) => `${name}: ${v.id} (${v.impact}) ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`,
      ),
    ).toEqual([]);
  }

  /** What a person would call finished: no focus frame around the page, no amount in nine decimals, no button label broken. */
  async function finished(name: string): Promise<void> {
    const main = page.locator('main');
    // main takes focus after each navigation, after typing too (when :focus-visible rings show)
    const ring = await main.evaluate((el) => {
      el.focus();
      return getComputedStyle(el).outlineStyle;
    });
    expect(ring, `${name}: a frame around the page's content`).toBe('none');
    expect((await main.innerText()).match(/\d\.\d{5,}/g), `${name}: amounts past four decimals`).toBeNull();
    const broken = await page.locator('main button:visible').evaluateAll((buttons) =>
      buttons
        .filter((b) => {
          const range = document.createRange();
          range.selectNodeContents(b);
          return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
        })
        .map((b) => b.textContent),
    );
    expect(broken, `${name}: button labels on two lines`).toEqual([]);
  }

  /** Waits until the page shows `text`; when it does not, the error says what it showed instead. */
  async function shows(text: string | RegExp, timeout = 30_000): Promise<void> {
    try {
      await page.getByText(text).first().waitFor({ timeout });
    } catch (err) {
      const seen = await page
        .locator('main')
        .innerText()
        .catch(() => '(no page)');
      throw new Error(
        `waited ${timeout / 1000} s for ${String(text)} at ${page.url()}; the page showed:\n${seen.slice(0, 800)}`,
        {
          cause: err,
        },
      );
    }
  }

  /** Does what opens a page listing webhook endpoints, and waits for that list's answer (200). */
  async function listsEndpoints(open: () => Promise<void>): Promise<void> {
    const listed = page.waitForResponse(
      (r) => r.request().method() === 'GET' && /\/v1\/webhook-endpoints\?/.test(r.url()),
      { timeout: 60_000 },
    );
    await open();
    const answer = await listed;
    expect(answer.status(), await answer.text()).toBe(200);
  }

  async function shot(name: string): Promise<void> {
    await finished(name);
    const file = `${OUT}/${name}.png`;
    await page.screenshot({ path: file, fullPage: true });
    expect(statSync(file).size).toBeGreaterThan(5_000);
  }

  async function chat(secret: string) {
    return fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'prince',
        messages: [{ role: 'user', content: 'Say hello to the console.' }],
      }),
    });
  }

  async function search(secret: string) {
    return fetch(`${servers.urls.directory}/v1/search?q=bakery`, {
      headers: { authorization: `Bearer ${secret}` },
    });
  }

  beforeAll(async () => {
    outbox = mkdtempSync(join(tmpdir(), 'eurus-console-browser-'));
    dns = await startTestDns(); // the DNS the sending domains' records are published in
    servers = await startTestServers('pglite', {
      // the webhook receiver of the test is plain http on loopback; one attempt a message
      env: {
        MAIL_OUTBOX_DIR: outbox,
        OUTBOUND_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_SCHEDULE: '0s',
        DNS_SERVERS: dns.server,
      },
    });
    await receiver.start();
    base = servers.urls.model as string;
    mkdirSync(OUT, { recursive: true });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1200, height: 900 }, acceptDownloads: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    // No network but our own two services.
    await context.route('**/*', (route) => {
      const url = route.request().url();
      const ours = url.startsWith(base) || url.startsWith(servers.urls.directory as string);
      if (ours || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
      errors.push(`fetched ${url}`);
      return route.abort();
    });
    page = await context.newPage();
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('dialog', (dialog) => void dialog.accept());
  });

  afterAll(async () => {
    await browser?.close();
    await servers?.stop();
    await receiver.stop();
    await dns?.close();
    rmSync(outbox, { recursive: true, force: true });
  });

  // the longest walk: on a busy 2-core machine it has taken more than the default minute
  it(
    'signs up, verifies by mail, makes a key, sees its calls, rotates and revokes it',
    { timeout: 180_000 },
    async () => {
      // The first page's JavaScript, gzipped, is far under 200 KB.
      const bundle = await fetch(`${base}/console/app.js`);
      expect(bundle.headers.get('content-type')).toMatch(/javascript/);
      const { gzipSync } = await import('node:zlib');
      expect(gzipSync(Buffer.from(await bundle.arrayBuffer())).length).toBeLessThan(200_000);

      // Sign up.
      await page.goto(`${base}/console/signup`);
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill('password1234');
      await page.getByRole('button', { name: 'Create account' }).click();
      await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/too easy to guess/);
      expect(await page.locator('#nav').isVisible()).toBe(false); // signed out: no console menu
      await accessible('sign up');
      await page.getByLabel('Password').fill(PASSWORD);
      await shot('1-sign-up');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByText('Check your mail').waitFor();
      await shot('2-check-your-mail');

      // The mail, read from the outbox; its link (MODEL_API_PUBLIC_URL defaults to localhost:port
      // 0 in tests, so the test keeps the link's path and query and opens it on the test server).
      const link = new URL(lastLink(outbox, EMAIL, '/console/verify'));
      expect(link.pathname).toBe('/console/verify');
      await page.goto(`${base}${link.pathname}${link.search}`);
      await page.getByRole('heading', { name: 'API keys' }).waitFor();
      expect(page.url()).toBe(`${base}/console/keys`); // the token left the address bar
      const cookies = await context.cookies(base);
      const cookie = cookies.find((c) => c.name === 'eurus_session');
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
      expect(await page.evaluate('document.cookie')).toBe(''); // HttpOnly: scripts never see it
      await accessible('keys (empty)');
      await shot('3-keys-empty');

      // Create a key with scopes of both services; the secret is shown once, copied to the clipboard.
      await page.getByLabel('Key name').fill('console e2e');
      await page.getByRole('checkbox', { name: /^chat/ }).check();
      await page.getByRole('checkbox', { name: 'search' }).check();
      await page.getByRole('button', { name: 'Create key' }).click();
      const shown = page.locator('#new-secret');
      await shown.waitFor();
      const secret = (await shown.textContent()) ?? '';
      expect(secret).toMatch(/^sk_[0-9A-Za-z]{48}$/);
      await expect.poll(() => page.getByText('shown this once').count()).toBeGreaterThan(0);
      await page.getByRole('button', { name: 'Copy secret' }).click();
      await page.getByText('Copied to the clipboard.').waitFor();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
      await accessible('key created');
      await shot('4-key-created');

      // Calls with it, from the test: chat on the model API, search on the directory API.
      for (let i = 0; i < 3; i++) expect((await chat(secret)).status).toBe(200);
      expect((await search(secret)).status).toBe(200);

      // The keys list (reloaded): masked, with last use, and no secret anywhere in the HTML.
      await page.goto(`${base}/console/keys`);
      const row = page.locator('tbody tr', { hasText: 'console e2e' });
      await expect.poll(() => row.textContent()).toContain(`sk_...${secret.slice(-4)}`);
      expect(await row.locator('td').nth(6).textContent()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/); // last used
      expect(await page.content()).not.toContain(secret);
      expect(await page.content()).not.toContain(secret.slice(3));
      await shot('5-keys-list');

      // Usage: the chart shows the chat calls by model; the totals equal GET /v1/usage.
      // Usage records are written in batches: the page is opened once the API counts the 3 chats.
      const today = new Date().toISOString().slice(0, 10);
      const from = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
      const usageNow = async () =>
        (await (await page.request.get(`${base}/v1/usage?from=${from}&to=${today}`)).json()) as {
          totals: { requests: number; cost: string };
        };
      await expect.poll(async () => (await usageNow()).totals.requests).toBe(3);
      const report = await usageNow();
      await page.getByRole('link', { name: 'Usage' }).click();
      await page.getByRole('heading', { name: 'Usage' }).waitFor();
      await page.locator('#total-requests').waitFor();
      expect(await page.locator('#total-requests').textContent()).toContain('3');
      // read as EUR with two to four decimals; the exact amount in the tooltip (and the CSV)
      expect(await page.locator('#total-cost').textContent()).toMatch(
        /^Cost \(EUR\)(€\d+\.\d{2}|€0\.\d{4}|< €0\.0001)$/,
      );
      expect(await page.locator('#total-cost [title]').getAttribute('title')).toBe(
        `${report.totals.cost} EUR`,
      );
      expect(await page.locator(`svg rect[data-model="prince"][data-day="${today}"]`).count()).toBe(2);
      expect(await page.content()).not.toContain(secret);
      expect(
        await page.locator('.legend .swatch.c0').evaluate((el) => getComputedStyle(el).backgroundColor),
      ).toBe('rgb(11, 87, 208)');
      await accessible('usage');
      await shot('6-usage');
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download CSV' }).click(),
      ]);
      const csv = readFileSync((await download.path()) as string, 'utf8')
        .trim()
        .split('\n');
      expect(csv[0]).toBe(
        'start,end,model,requests,input_tokens,output_tokens,audio_seconds,images,steps,cost_eur',
      );
      expect(csv.at(-1)).toMatch(new RegExp(`^total,,,3,.*,${report.totals.cost.replace('.', '\\.')}$`));

      // The directory API's usage, read by the page across origins with the session: the search.
      await page.getByLabel('Service').selectOption('directory');
      await page.getByRole('button', { name: 'Show' }).click();
      await expect
        .poll(() => page.locator(`svg rect[data-model="search"][data-day="${today}"]`).count())
        .toBe(2);
      const directoryUsage = await page.request.get(
        `${servers.urls.directory}/v1/usage?from=${from}&to=${today}`,
      );
      const directoryReport = (await directoryUsage.json()) as { totals: { requests: number; cost: string } };
      expect(directoryReport.totals.requests).toBe(1);
      expect(await page.locator('#total-cost [title]').getAttribute('title')).toBe(
        `${directoryReport.totals.cost} EUR`,
      );
      // One project's usage: the key was made in the default project, so another shows none.
      await page.getByLabel('Project', { exact: true }).selectOption({ label: 'Default project' });
      await page.getByRole('button', { name: 'Show' }).click();
      await expect.poll(() => page.locator('#total-requests').textContent()).toBe('Requests1');
      await accessible('usage (directory)');
      await shot('6b-usage-directory');
      // CORS with credentials for the console's origin alone
      const sessionCookie = `eurus_session=${cookie?.value}`;
      const foreign = await fetch(`${servers.urls.directory}/v1/usage?from=${from}&to=${today}`, {
        headers: { origin: 'https://evil.example', cookie: sessionCookie },
      });
      // (`*` for bearer calls, src/platform/browser.ts, never with credentials: no cookie rides.)
      expect(foreign.headers.get('access-control-allow-origin')).not.toBe('https://evil.example');
      expect(foreign.headers.get('access-control-allow-credentials')).toBeNull();
      const own = await fetch(`${servers.urls.directory}/v1/usage?from=${from}&to=${today}`, {
        headers: { origin: base, cookie: sessionCookie },
      });
      expect(own.headers.get('access-control-allow-origin')).toBe(base);
      expect(own.headers.get('access-control-allow-credentials')).toBe('true');

      // Projects.
      await page.getByRole('link', { name: 'Projects' }).click();
      await page.getByLabel('New project name').fill('Second project');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByText('Second project').waitFor();
      await accessible('projects');
      await shot('7-projects');
      // Usage of the new project alone: none of the calls were made with its keys.
      await page.getByRole('link', { name: 'Usage' }).click();
      await page.getByRole('heading', { name: 'Usage' }).waitFor();
      await page.getByLabel('Project', { exact: true }).selectOption({ label: 'Second project' });
      await page.getByRole('button', { name: 'Show' }).click();
      await expect.poll(() => page.locator('#total-requests').textContent()).toBe('Requests0');
      expect(page.url()).toContain('project_id=proj_');
      // no usage: an empty state, not an axis over nothing
      expect(await page.locator('.chart-empty').allTextContents()).toEqual([
        'No usage in this period.',
        'No usage in this period.',
      ]);
      expect(await page.locator('svg.chart').count()).toBe(0);
      await shot('7b-usage-empty');

      // Rotate without grace: a new secret once, the old one refused at once.
      await page.getByRole('link', { name: 'API keys' }).click();
      await page.getByRole('button', { name: 'Rotate console e2e' }).click();
      await page.getByRole('heading', { name: /rotated/ }).waitFor();
      const rotated = (await page.locator('#new-secret').textContent()) ?? '';
      expect(rotated).toMatch(/^sk_[0-9A-Za-z]{48}$/);
      expect(rotated).not.toBe(secret);
      expect((await chat(secret)).status).toBe(401);
      expect((await chat(rotated)).status).toBe(200);
      await shot('8-key-rotated');

      // Revoke: the next call is refused.
      await page.getByRole('button', { name: 'Revoke console e2e' }).click();
      await expect
        .poll(() => page.locator('tbody tr', { hasText: 'console e2e' }).textContent(), { timeout: 15_000 })
        .toContain('revoked');
      expect((await chat(rotated)).status).toBe(401);
      expect((await search(rotated)).status).toBe(401);
      expect(await page.content()).not.toContain(rotated);
      await shot('9-key-revoked');

      // Plans: subscribe to Search unlimited and see it on the month's statement with the usage.
      // Usage records are written in batches: wait for the last chat's (4 chats in all).
      await expect
        .poll(async () => {
          const usage = await page.request.get(`${base}/v1/usage?from=${from}&to=${today}`);
          return ((await usage.json()) as { totals: { requests: number } }).totals.requests;
        })
        .toBe(4);
      await page.getByRole('link', { name: 'Plans and billing' }).click();
      await page.getByRole('button', { name: 'Subscribe to Search unlimited' }).click();
      await page.getByRole('button', { name: 'Cancel Search unlimited' }).waitFor();
      const statementText = (await page.locator('#statement').textContent()) ?? '';
      expect(statementText).toContain(`Search unlimited, ${today}`);
      expect(statementText).toContain('Model API: prince');
      expect(statementText).toContain('Directory API: search');
      // An active subscription is billed pro rata up to the second the statement is asked for, so
      // the page's total and a later GET differ by the seconds between them (about 0.0000768 EUR a
      // second for 199 EUR a month). Cancelled, the subscription's line stops moving: compare then.
      await page.getByRole('button', { name: 'Cancel Search unlimited' }).click();
      await page.getByRole('button', { name: 'Subscribe to Search unlimited' }).waitFor();
      expect((await page.locator('#statement').textContent()) ?? '').toContain(`Search unlimited, ${today}`);
      const statement = (await (
        await page.request.get(`${base}/v1/statements/${today.slice(0, 7)}`)
      ).json()) as { total: string };
      expect(await page.locator('#statement-total [title]').getAttribute('title')).toBe(
        `${statement.total} EUR`,
      );
      await accessible('plans and billing');
      await shot('9b-plans-and-billing');
      // narrow (a split screen): the table squeezes, and no button label breaks
      await page.setViewportSize({ width: 700, height: 900 });
      await shot('9c-plans-narrow');
      await page.setViewportSize({ width: 1200, height: 900 });

      // Log out (the session ends on the server), and in again.
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('heading', { name: 'Log in' }).waitFor();
      const after = await page.request.get(`${base}/v1/keys`);
      expect(after.status()).toBe(401);
      await accessible('log in');
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
      await accessible('reset');
      await shot('11-reset');
      await page.getByRole('link', { name: 'Back to log in' }).click();
      await page.getByRole('heading', { name: 'Log in' }).waitFor();
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill(PASSWORD);
      await shot('10-log-in');
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'API keys' }).waitFor();

      // The public status page: both services up, no login needed.
      await servers.ready;
      await expect
        .poll(
          async () => ((await (await fetch(`${base}/status.json`)).json()) as { status: string }).status,
          {
            timeout: 10_000,
          },
        )
        .toBe('operational');
      await page.goto(`${base}/status`);
      await page.getByText('All systems operational').waitFor();
      await accessible('status');
      await shot('12-status');
      expect(errors).toEqual([]);
    },
  );

  it('registers a webhook endpoint, sees its messages and attempts, re-sends one and rotates the secret', async () => {
    // (logged in by the test before, which also made a "Second project")
    const arrived = async (n: number) => {
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(n);
      return receiver.received[n - 1]!;
    };
    // A page still waiting for its answers when the reader moves on never draws over the next one
    // (a loaded machine made this race: the keys page, slow, drew after the webhooks page).
    let slowKeys: (() => void) | undefined;
    await page.route(/\/v1\/keys\?/, async (route) => {
      await new Promise<void>((resolve) => (slowKeys = resolve));
      await route.continue().catch(() => undefined); // cut short by the navigation: nothing to continue
    });
    await page.goto(`${base}/console/keys`);
    await expect.poll(() => slowKeys !== undefined).toBe(true);
    await listsEndpoints(() => page.getByRole('link', { name: 'Webhooks' }).click());
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await shows('0 endpoint(s)');
    const keysEnded = page
      .waitForEvent('requestfinished', (r) => /\/v1\/keys\?/.test(r.url()))
      .catch(() => undefined);
    const keysFailed = page.waitForEvent('requestfailed', (r) => /\/v1\/keys\?/.test(r.url()));
    slowKeys!();
    await Promise.race([keysEnded, keysFailed]);
    await page.unroute(/\/v1\/keys\?/);
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200))); // its page, had it drawn
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Webhooks');
    await shows('0 endpoint(s)');
    await accessible('webhooks (empty)');

    // Register: the secret is shown once, and the receiver verifies a test event with it.
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('Description').fill('the office ERP');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    await page.getByRole('heading', { name: /Signing secret of .* created/ }).waitFor();
    const secret = (await page.locator('#new-secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await accessible('webhook endpoint created');
    await shot('13-webhook-created');
    await page.getByRole('button', { name: `Send test event to ${receiver.url}` }).click();
    await page.getByText(/Test event msg_\w+ queued/).waitFor();
    const first = await arrived(1);
    expect(new Webhook(secret).verify(first.body, first.headers)).toMatchObject({ type: 'test' });

    // A delivery that fails: seen in the endpoint's messages with its attempt, then re-sent.
    receiver.failing = true;
    await page.getByRole('button', { name: `Send test event to ${receiver.url}` }).click();
    const failed = await arrived(2);
    const failedId = failed.headers['webhook-id']!;
    const endpointId = await page.locator('tr[data-endpoint-id]').first().getAttribute('data-endpoint-id');
    const statusOf = async (id: string) => {
      const res = await page.request.get(
        `${servers.urls.directory}/v1/webhook-endpoints/${endpointId}/messages`,
      );
      return ((await res.json()) as { data: Array<{ id: string; status: string }> }).data.find(
        (m) => m.id === id,
      )?.status;
    };
    await expect.poll(() => statusOf(failedId)).toBe('failed');
    await page.getByRole('link', { name: receiver.url }).click();
    await page.getByRole('heading', { name: 'Webhook endpoint' }).waitFor();
    await page.getByLabel('Messages', { exact: true }).selectOption('failed');
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    const row = page.locator(`tr[data-message-id="${failedId}"]`);
    await expect.poll(() => row.count(), { timeout: 15_000 }).toBe(1);
    expect(await row.textContent()).toContain('failed');
    await row.getByText('1 attempt(s)').click();
    expect(await row.textContent()).toContain('500');
    expect(await row.textContent()).toContain('receiver down for maintenance');
    await accessible('webhook messages');
    await shot('14-webhook-messages');
    receiver.failing = false;
    await page.getByRole('button', { name: `Re-send ${failedId}` }).click();
    await page.getByText(`Message ${failedId} is sent again`).waitFor();
    const resent = await arrived(3);
    expect(resent.headers['webhook-id']).toBe(failedId);
    expect(new Webhook(secret).verify(resent.body, resent.headers)).toMatchObject({ id: failedId });
    await expect.poll(() => statusOf(failedId)).toBe('delivered');
    await page.getByLabel('Messages', { exact: true }).selectOption('delivered');
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await expect
      .poll(() => page.locator(`tr[data-message-id="${failedId}"]`).count(), { timeout: 15_000 })
      .toBe(1);

    // Rotate with a grace period: both signatures verify the next event.
    await page.getByRole('link', { name: 'All endpoints' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByRole('button', { name: `Rotate secret of ${receiver.url}` }).click();
    await page.getByRole('heading', { name: /Signing secret of .* rotated/ }).waitFor();
    const rotated = (await page.locator('#new-secret').textContent()) ?? '';
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByRole('button', { name: `Send test event to ${receiver.url}` }).click();
    const after = await arrived(4);
    expect(after.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(() => new Webhook(rotated).verify(after.body, after.headers)).not.toThrow();
    expect(() => new Webhook(secret).verify(after.body, after.headers)).not.toThrow();
    await shot('15-webhook-rotated');

    // The secrets are never in the page again.
    await listsEndpoints(async () => void (await page.goto(`${base}/console/webhooks`)));
    await shows('1 endpoint(s)');
    expect(await page.content()).not.toContain(secret.slice(6));
    expect(await page.content()).not.toContain(rotated.slice(6));
    await accessible('webhooks');

    // Another project of the account has endpoints of its own.
    await page.getByLabel('Project', { exact: true }).selectOption({ label: 'Second project' });
    await listsEndpoints(() => page.getByRole('button', { name: 'Show endpoints' }).click());
    await shows('0 endpoint(s)');
    expect(page.url()).toContain('project_id=proj_');

    // Only the console's origin may call these with the session, and changes need the CSRF token.
    const cookie = (await context.cookies(base)).find((c) => c.name === 'eurus_session')!;
    const directory = servers.urls.directory as string;
    const preflight = (origin: string) =>
      fetch(`${directory}/v1/webhook-endpoints`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-csrf-token',
        },
      });
    const ours = await preflight(base);
    expect(ours.status).toBe(204);
    expect(ours.headers.get('access-control-allow-origin')).toBe(base);
    expect(ours.headers.get('access-control-allow-credentials')).toBe('true');
    expect(ours.headers.get('access-control-allow-headers')).toMatch(/X-CSRF-Token/);
    const theirs = await preflight('https://evil.example');
    expect(theirs.headers.get('access-control-allow-credentials')).toBeNull();
    expect(theirs.headers.get('access-control-allow-origin')).not.toBe('https://evil.example');
    const forged = await fetch(`${directory}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: {
        origin: 'https://evil.example',
        cookie: `eurus_session=${cookie.value}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('csrf_token_invalid');
    const listed = await fetch(`${directory}/v1/webhook-endpoints`, {
      headers: { cookie: `eurus_session=${cookie.value}` },
    });
    expect(((await listed.json()) as { data: unknown[] }).data).toHaveLength(1);
    // a project that is not the account's is not found, as another account's endpoint is not
    const foreign = await servers.platform.accounts.createAccount('another tenant');
    const elsewhere = await fetch(`${directory}/v1/webhook-endpoints`, {
      headers: { cookie: `eurus_session=${cookie.value}`, 'eurus-project': foreign.projectId },
    });
    expect(elsewhere.status).toBe(404);
    expect(((await elsewhere.json()) as { error: { code: string } }).error.code).toBe('project_not_found');
    expect(errors).toEqual([]);
  });

  it('adds a sending domain, shows the DNS records to publish, and verifies it once they are', async () => {
    await page.goto(`${base}/console/keys`);
    await page.getByRole('link', { name: 'Sending domains' }).click();
    await page.getByRole('heading', { name: 'Sending domains', level: 1 }).waitFor();
    await page.getByText('0 domain(s)').waitFor();
    await page.getByLabel('Domain', { exact: true }).fill('mail.hopper-compilers.example');
    await page.getByLabel('Sender name').fill('Hopper Compilers');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('heading', { name: 'mail.hopper-compilers.example: pending' }).waitFor();
    const section = page.locator('section[data-domain-id]');
    const purposes = await section
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-purpose')));
    expect(purposes.sort()).toEqual(['dkim', 'dmarc', 'return_path', 'spf']);
    await accessible('sending domain added');
    await shot('16-sending-domain-added');

    // The records as the page shows them, published at "the DNS provider"; Verify finds them.
    const rows = await section
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
      );
    for (const [, type, name, value] of rows) dns.publish(name!, type as 'TXT' | 'MX', value!);
    await page.getByRole('button', { name: 'Verify mail.hopper-compilers.example' }).click();
    await page.getByRole('heading', { name: 'mail.hopper-compilers.example: verified' }).waitFor();
    const states = await section.locator('tbody tr td:nth-child(5)').allTextContents();
    expect(states).toEqual(['verified', 'verified', 'verified', 'verified']);
    await accessible('sending domain verified');
    await shot('17-sending-domain-verified');
    // the same through the API with the session, in the default project
    const cookie = (await context.cookies(base)).find((c) => c.name === 'eurus_session')!;
    const listed = (await (
      await fetch(`${servers.urls.directory}/v1/sending-domains`, {
        headers: { cookie: `eurus_session=${cookie.value}` },
      })
    ).json()) as { data: Array<{ domain: string; status: string }> };
    expect(listed.data).toMatchObject([{ domain: 'mail.hopper-compilers.example', status: 'verified' }]);
    expect(errors).toEqual([]);
  });
});
