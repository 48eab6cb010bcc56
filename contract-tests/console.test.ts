// The console's accounts for people, over HTTP as a browser sends it (cookies by hand): sign-up,
// the verification mail read from the outbox, sessions, CSRF, session fixation, another
// account's ids, log-in throttling, password reset, log out. Both storage paths.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastLink, mailTo } from './support/outbox.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';
import { explain, operations, responseValidator } from './support/spec.ts';

const STORAGES = await storages();
const ops = Object.fromEntries(operations('model').map((op) => [op.operationId, op]));
const PASSWORD = 'velvet otter climbs 7 quiet stairs';

/** A response body as the tests read it: the envelope's error, a list's data, or an object's fields. */
interface Loose {
  error?: { type: string; code: string; message: string; param: string | null };
  data?: Array<Record<string, unknown>>;
  id?: string;
  secret?: string;
  status?: string;
  csrf_token?: string;
  [field: string]: unknown;
}

interface Browser {
  cookie?: string | undefined;
  csrf?: string | undefined;
  /** The cookies the service set on this browser (the session's, the verification link's). */
  jar?: Record<string, string>;
}

describe.each(STORAGES)('console accounts on %s', (storage: Storage) => {
  let servers: TestServers;
  let base: string;
  let outbox: string;

  async function call(
    browser: Browser | undefined,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(browser?.cookie ? { cookie: browser.cookie } : {}),
        ...(browser?.csrf && method !== 'GET' ? { 'x-csrf-token': browser.csrf } : {}),
        ...headers,
      },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const setCookie = res.headers.get('set-cookie');
    if (browser && setCookie) {
      browser.jar ??= {};
      for (const line of res.headers.getSetCookie()) {
        const [, name, value] = /^([^=]+)=([^;]*)/.exec(line) ?? [];
        if (!name) continue;
        if (value && !/Max-Age=0(;|$)/.test(line)) browser.jar[name] = value;
        else delete browser.jar[name];
      }
      const cookies = Object.entries(browser.jar).map(([name, value]) => `${name}=${value}`);
      browser.cookie = cookies.length ? cookies.join('; ') : undefined;
    }
    const text = await res.text();
    const json = text ? (JSON.parse(text) as Loose) : undefined;
    if (browser && typeof json?.csrf_token === 'string') browser.csrf = json.csrf_token;
    return { status: res.status, json, setCookie, headers: res.headers };
  }

  /** Signs up, follows the verification link from the mail: a logged-in browser. */
  async function signedUp(email: string): Promise<Browser> {
    const browser: Browser = {};
    const signUp = await call(browser, 'POST', '/v1/sign-ups', { email, password: PASSWORD });
    expect(signUp.status).toBe(202);
    const link = new URL(lastLink(outbox, email, '/console/verify'));
    const token = link.searchParams.get('token');
    const verified = await call(browser, 'POST', '/v1/email-verifications', { token });
    expect(verified.status).toBe(201);
    return browser;
  }

  beforeAll(async () => {
    outbox = mkdtempSync(join(tmpdir(), 'eurus-console-outbox-'));
    servers = await startTestServers(storage, {
      which: ['model'],
      env: { MAIL_OUTBOX_DIR: outbox, MODEL_API_PUBLIC_URL: 'https://console.test.example' },
    });
    base = servers.urls.model as string;
  });
  afterAll(async () => {
    await servers?.stop();
    rmSync(outbox, { recursive: true, force: true });
  });

  it('signs up, mails a verification link, verifies and starts a session with a default project', async () => {
    const email = `Ada.${storage}@example.eu`;
    const browser: Browser = {};
    const signUp = await call(browser, 'POST', '/v1/sign-ups', { email, password: PASSWORD });
    expect(signUp.status).toBe(202);
    expect(signUp.setCookie).toMatch(
      /^eurus_verify=[A-Za-z0-9_-]{43}; Path=\/v1\/email-verifications; HttpOnly; SameSite=Lax; Max-Age=86400; Secure$/,
    );
    const validate = responseValidator(ops.createSignUp!, '202');
    expect(validate(signUp.json), explain(validate)).toBe(true);
    expect(signUp.json).toEqual({
      object: 'sign_up',
      email: email.toLowerCase(),
      status: 'verification_sent',
    });

    const [mail] = mailTo(outbox, email.toLowerCase());
    expect(mail?.subject).toMatch(/verify/i);
    const link = lastLink(outbox, email.toLowerCase(), '/console/verify');
    expect(link).toMatch(/^https:\/\/console\.test\.example\/console\/verify\?token=vt_[A-Za-z0-9_-]{43}$/);

    // Not verified yet: the right password is refused with a reason, and a new link is mailed (for
    // this browser, which it signs in).
    const early = await call(browser, 'POST', '/v1/sessions', { email, password: PASSWORD });
    expect(early.status).toBe(403);
    expect(early.json?.error?.code).toBe('email_not_verified');

    // that new link ends the first one: only the link mailed last verifies
    const newer = lastLink(outbox, email.toLowerCase(), '/console/verify');
    expect(newer).not.toBe(link);
    const first = await call(browser, 'POST', '/v1/email-verifications', {
      token: new URL(link).searchParams.get('token'),
    });
    expect(first.status).toBe(400);
    expect(first.json?.error?.code).toBe('invalid_token');
    const token = new URL(newer).searchParams.get('token');
    const verified = await call(browser, 'POST', '/v1/email-verifications', { token });
    expect(verified.status).toBe(201);
    expect(responseValidator(ops.verifyEmail!, '201')(verified.json)).toBe(true);
    expect(verified.setCookie).toMatch(
      /^eurus_session=ses_[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800; Secure$/,
    );
    // Single use.
    expect((await call({}, 'POST', '/v1/email-verifications', { token })).json?.error?.code).toBe(
      'invalid_token',
    );

    const session = await call(browser, 'GET', '/v1/sessions/current');
    expect(session.status).toBe(200);
    expect(session.json).toMatchObject({ object: 'session', email: email.toLowerCase() });
    const projects = await call(browser, 'GET', '/v1/projects');
    expect(projects.status).toBe(200);
    expect(projects.json?.data).toHaveLength(1);
    expect(projects.json?.data?.[0]).toMatchObject({ is_default: true, name: 'Default project' });

    // The session creates a key (with its CSRF token) that works on the API.
    const key = await call(browser, 'POST', '/v1/keys', {
      name: 'from the console',
      scopes: ['chat', 'search'],
    });
    expect(key.status).toBe(201);
    const models = await fetch(`${base}/v1/models`, {
      headers: { authorization: `Bearer ${key.json?.secret}` },
    });
    expect(models.status).toBe(200);
    const usage = await call(browser, 'GET', '/v1/usage?from=2026-01-01&to=2026-01-31');
    expect(usage.status).toBe(200);

    // The database holds no secret: not the password, the session's nor the link's.
    const rows = JSON.stringify(
      await servers.platform.db.query(
        'select u.*, s.*, t.* from console_users u left join console_sessions s on s.user_id = u.id left join console_tokens t on t.user_id = u.id',
      ),
    );
    expect(rows).not.toContain(PASSWORD);
    expect(rows).not.toContain(browser.cookie!.split('=')[1]);
    expect(rows).not.toContain(token!);
    expect(rows).toContain('scrypt$32768$8$1$');
  });

  it('refuses a change without the CSRF token, or from another origin, and accepts reads', async () => {
    const browser = await signedUp(`csrf.${storage}@example.eu`);
    const forged = await call({ cookie: browser.cookie }, 'POST', '/v1/projects', { name: 'forged' });
    expect(forged.status).toBe(403);
    expect(forged.json?.error?.code).toBe('csrf_token_invalid');
    const wrong = await call(
      { cookie: browser.cookie, csrf: 'x'.repeat(43) },
      'DELETE',
      '/v1/sessions/current',
    );
    expect(wrong.json?.error?.code).toBe('csrf_token_invalid');
    const crossOrigin = await call(
      browser,
      'POST',
      '/v1/projects',
      { name: 'cross' },
      { origin: 'https://evil.example' },
    );
    expect(crossOrigin.json?.error?.code).toBe('csrf_token_invalid');
    const listed = await call({ cookie: browser.cookie }, 'GET', '/v1/projects');
    expect(listed.status).toBe(200);
    expect(listed.json?.data?.map((p) => p.name)).not.toContain('forged');
    const made = await call(browser, 'POST', '/v1/projects', { name: 'real' });
    expect(made.status).toBe(201);
  });

  it('refuses a log-in (or any console form) a browser posts from another site: login CSRF', async () => {
    const email = `login-csrf.${storage}@example.eu`;
    await signedUp(email);
    const attempts: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' }, // another port or subdomain of the site is not the console
      { origin: 'null' },
    ];
    for (const headers of attempts) {
      const forged = await call({}, 'POST', '/v1/sessions', { email, password: PASSWORD }, headers);
      expect(forged.status, JSON.stringify(headers)).toBe(403);
      expect(forged.json?.error?.code).toBe('cross_site_request');
      expect(forged.setCookie).toBeNull();
    }
    for (const [path, body] of [
      ['/v1/sign-ups', { email: `other.${email}`, password: PASSWORD }],
      ['/v1/email-verifications', { token: 'vt_forged' }],
      ['/v1/password-resets', { email }],
      ['/v1/password-resets/confirm', { token: 'rt_forged', password: PASSWORD }],
    ] as const) {
      const forged = await call(undefined, 'POST', path, body, { origin: 'https://evil.example' });
      expect(forged.json?.error?.code, path).toBe('cross_site_request');
    }
    // the console's own page (its public origin, or the host it was reached at), and clients
    // that are not browsers
    for (const headers of [
      { origin: 'https://console.test.example', 'sec-fetch-site': 'same-origin' },
      { origin: base },
      {},
    ]) {
      const own = await call({}, 'POST', '/v1/sessions', { email, password: PASSWORD }, headers);
      expect(own.status, JSON.stringify(headers)).toBe(201);
    }
  });

  it("verifies by a link opened in another browser but signs nobody in there: login CSRF by someone's link", async () => {
    // an attacker signs up and mails their own link to a victim: opening it must not sign the
    // victim into the attacker's account
    const email = `link-csrf.${storage}@example.eu`;
    const attacker: Browser = {};
    expect((await call(attacker, 'POST', '/v1/sign-ups', { email, password: PASSWORD })).status).toBe(202);
    const token = new URL(lastLink(outbox, email, '/console/verify')).searchParams.get('token');
    const victim: Browser = {};
    const opened = await call(victim, 'POST', '/v1/email-verifications', { token });
    expect(opened.status).toBe(200);
    const validate = responseValidator(ops.verifyEmail!, '200');
    expect(validate(opened.json), explain(validate)).toBe(true);
    expect(opened.json).toEqual({ object: 'email_verification', email, status: 'verified' });
    expect(opened.setCookie).toBeNull();
    expect(opened.json?.csrf_token).toBeUndefined();
    expect((await call(victim, 'GET', '/v1/sessions/current')).status).toBe(401);
    // a forged browser cookie is not the one that asked either
    const other = `link-csrf-2.${storage}@example.eu`;
    await call({}, 'POST', '/v1/sign-ups', { email: other, password: PASSWORD });
    const second = new URL(lastLink(outbox, other, '/console/verify')).searchParams.get('token');
    const forged = await call({ cookie: 'eurus_verify=guessed' }, 'POST', '/v1/email-verifications', {
      token: second,
    });
    expect(forged.status).toBe(200);
    // the address is verified all the same: its owner logs in with the password
    expect((await call({}, 'POST', '/v1/sessions', { email, password: PASSWORD })).status).toBe(201);
    // a log-in before verifying mails a new link bound to the browser that logged in
    const third = `link-csrf-3.${storage}@example.eu`;
    await call({}, 'POST', '/v1/sign-ups', { email: third, password: PASSWORD });
    const owner: Browser = {};
    const early = await call(owner, 'POST', '/v1/sessions', { email: third, password: PASSWORD });
    expect(early.status).toBe(403);
    expect(owner.jar?.eurus_verify).toBeDefined();
    const relinked = new URL(lastLink(outbox, third, '/console/verify')).searchParams.get('token');
    expect((await call(owner, 'POST', '/v1/email-verifications', { token: relinked })).status).toBe(201);
  });

  it('prevents session fixation: log-in mints a new session and ends the one the browser had', async () => {
    const email = `fixation.${storage}@example.eu`;
    const victim = await signedUp(email);
    const planted = victim.cookie!;
    const loggedIn = await call(victim, 'POST', '/v1/sessions', { email, password: PASSWORD });
    expect(loggedIn.status).toBe(201);
    expect(victim.cookie).toBeDefined();
    expect(victim.cookie).not.toBe(planted);
    expect((await call({ cookie: planted }, 'GET', '/v1/sessions/current')).status).toBe(401);
    expect((await call(victim, 'GET', '/v1/sessions/current')).status).toBe(200);
    // A made-up cookie is nobody's session.
    const made = await call({ cookie: 'eurus_session=ses_attacker' }, 'GET', '/v1/projects');
    expect(made.status).toBe(401);
    expect(made.json?.error?.code).toBe('invalid_session');
  });

  it("answers 404 for another account's project and key ids, as the API does", async () => {
    const alice = await signedUp(`alice.${storage}@example.eu`);
    const bob = await signedUp(`bob.${storage}@example.eu`);
    const project = await call(alice, 'POST', '/v1/projects', { name: 'alice only' });
    const key = await call(alice, 'POST', '/v1/keys', { name: 'alice key', scopes: ['chat'] });
    expect((await call(bob, 'GET', `/v1/projects/${project.json?.id}`)).status).toBe(404);
    expect((await call(bob, 'PATCH', `/v1/projects/${project.json?.id}`, { name: 'mine' })).status).toBe(404);
    expect((await call(bob, 'GET', `/v1/keys/${key.json?.id}`)).status).toBe(404);
    expect((await call(bob, 'DELETE', `/v1/keys/${key.json?.id}`)).status).toBe(404);
    expect(
      (await call(bob, 'POST', '/v1/keys', { name: 'x', scopes: ['chat'], project_id: project.json?.id }))
        .status,
    ).toBe(404);
    const keys = await call(bob, 'GET', `/v1/keys?project_id=${project.json?.id}`);
    expect(keys.status).toBe(404);
    expect(keys.json?.error).toMatchObject({ code: 'not_found', param: 'project_id' });
  });

  it('throttles log-in after repeated failures, per account and address, with Retry-After', async () => {
    const email = `throttle.${storage}@example.eu`;
    await signedUp(email);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      statuses.push(
        (await call({}, 'POST', '/v1/sessions', { email, password: `wrong guess number ${i}` })).status,
      );
    }
    // five free failures, the sixth blocks the pair for a second, the seventh waits
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429]);
    const refused = await call({}, 'POST', '/v1/sessions', { email, password: PASSWORD });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.json?.error?.code).toBe('rate_limit_exceeded');
  });

  it("never locks the owner out from their own address; the guesser's delay grows", async () => {
    const email = `owner.${storage}@example.eu`;
    await signedUp(email);
    const attacker = '127.0.0.2';
    const owner = '127.0.0.3';
    /** A log-in from another address of this machine (fetch cannot choose its source address). */
    const attempt = (localAddress: string, password: string) =>
      new Promise<{ status: number; retryAfterMs: number }>((resolve, reject) => {
        const url = new URL(`${base}/v1/sessions`);
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            localAddress,
            headers: { 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                retryAfterMs: Number(res.headers['retry-after-ms'] ?? 0),
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ email, password }));
      });
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await attempt(attacker, `guess ${i}`)).status);
    expect(statuses.slice(0, 6)).toEqual(Array(6).fill(401));
    expect(statuses.slice(6)).toEqual(Array(3).fill(429));
    // the owner, from elsewhere, with the right password: in at once
    expect((await attempt(owner, PASSWORD)).status).toBe(201);
    // the guesser's wait doubles with each failure once the block has passed
    const first = await attempt(attacker, 'guess again');
    await new Promise((r) => setTimeout(r, first.retryAfterMs + 50));
    expect((await attempt(attacker, 'guess after the wait')).status).toBe(401);
    const second = await attempt(attacker, 'guess too soon');
    expect(second.status).toBe(429);
    expect(second.retryAfterMs).toBeGreaterThan(first.retryAfterMs);
    expect(second.retryAfterMs).toBeLessThanOrEqual(2000);
  });

  it('answers a wrong password and an unknown address alike', async () => {
    const email = `same.${storage}@example.eu`;
    await signedUp(email);
    const wrong = await call({}, 'POST', '/v1/sessions', { email, password: 'not the password at all' });
    const unknown = await call({}, 'POST', '/v1/sessions', {
      email: `nobody.${storage}@example.eu`,
      password: PASSWORD,
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect({ ...wrong.json?.error, request_id: '' }).toEqual({ ...unknown.json?.error, request_id: '' });
  });

  it('refuses weak passwords with advice, and never tells whether an address is taken', async () => {
    const short = await call(undefined, 'POST', '/v1/sign-ups', {
      email: `weak.${storage}@example.eu`,
      password: 'short1',
    });
    expect(short.json?.error).toMatchObject({ code: 'validation_failed', param: 'password' });
    for (const password of ['password1234', 'qwertyuiop123', `weak.${storage}@example.eu`]) {
      const weak = await call(undefined, 'POST', '/v1/sign-ups', {
        email: `weak.${storage}@example.eu`,
        password,
      });
      expect(weak.status).toBe(400);
      expect(weak.json?.error).toMatchObject({ code: 'weak_password', param: 'password' });
    }
    const email = `taken.${storage}@example.eu`;
    await signedUp(email);
    const again = await call(undefined, 'POST', '/v1/sign-ups', { email, password: PASSWORD });
    expect(again.status).toBe(202);
    expect(again.json?.status).toBe('verification_sent');
    expect(mailTo(outbox, email).at(-1)?.subject).toMatch(/already have/);
  });

  it('resets a password by mail, ending every session; the link works once', async () => {
    const email = `reset.${storage}@example.eu`;
    const browser = await signedUp(email);
    expect((await call(undefined, 'POST', '/v1/password-resets', { email })).status).toBe(202);
    const unknown = await call(undefined, 'POST', '/v1/password-resets', {
      email: `ghost.${storage}@example.eu`,
    });
    expect(unknown.json).toEqual({ object: 'password_reset', status: 'sent' });
    const token = new URL(lastLink(outbox, email, '/console/reset')).searchParams.get('token');
    const weak = await call(undefined, 'POST', '/v1/password-resets/confirm', {
      token,
      password: 'password1234',
    });
    expect(weak.json?.error?.code).toBe('weak_password');
    const fresh = 'a brand new passphrase for reset tests';
    const done = await call(undefined, 'POST', '/v1/password-resets/confirm', { token, password: fresh });
    expect(done.status).toBe(200);
    expect(done.json).toEqual({ object: 'password_reset', status: 'completed' });
    expect((await call(browser, 'GET', '/v1/sessions/current')).status).toBe(401);
    expect(
      (await call(undefined, 'POST', '/v1/password-resets/confirm', { token, password: fresh })).status,
    ).toBe(400);
    expect((await call({}, 'POST', '/v1/sessions', { email, password: PASSWORD })).status).toBe(401);
    expect((await call({}, 'POST', '/v1/sessions', { email, password: fresh })).status).toBe(201);
    // Spent link tokens are dropped when the next one is made: only usable ones are kept.
    expect((await call(undefined, 'POST', '/v1/password-resets', { email })).status).toBe(202);
    const tokens = await servers.platform.db.query<{ used_at: number | null }>(
      'select t.used_at from console_tokens t join console_users u on u.id = t.user_id where u.email = $1',
      [email],
    );
    expect(tokens).toEqual([{ used_at: null }]);
  });

  it('kills every open reset link once one is used: an older mail no longer resets the password', async () => {
    const email = `reset-twice.${storage}@example.eu`;
    await signedUp(email);
    const links: string[] = [];
    for (let i = 0; i < 2; i++) {
      expect((await call(undefined, 'POST', '/v1/password-resets', { email })).status).toBe(202);
      links.push(new URL(lastLink(outbox, email, '/console/reset')).searchParams.get('token')!);
    }
    expect(links[0]).not.toBe(links[1]);
    const newer = 'the newer link chose this passphrase';
    const done = await call(undefined, 'POST', '/v1/password-resets/confirm', {
      token: links[1],
      password: newer,
    });
    expect(done.status).toBe(200);
    const older = await call(undefined, 'POST', '/v1/password-resets/confirm', {
      token: links[0],
      password: 'whoever kept the old mail picks this',
    });
    expect(older.status).toBe(400);
    expect(older.json?.error?.code).toBe('invalid_token');
    expect((await call({}, 'POST', '/v1/sessions', { email, password: newer })).status).toBe(201);
  });

  it('ends an unused reset link when a newer one is issued: only the last mail resets', async () => {
    const email = `reset-newer.${storage}@example.eu`;
    await signedUp(email);
    const links: string[] = [];
    for (let i = 0; i < 2; i++) {
      expect((await call(undefined, 'POST', '/v1/password-resets', { email })).status).toBe(202);
      links.push(new URL(lastLink(outbox, email, '/console/reset')).searchParams.get('token')!);
    }
    const older = await call(undefined, 'POST', '/v1/password-resets/confirm', {
      token: links[0],
      password: 'whoever kept the first mail picks this',
    });
    expect(older.status).toBe(400);
    expect(older.json?.error?.code).toBe('invalid_token');
    const newer = 'the second mail chose this passphrase';
    expect(
      (await call(undefined, 'POST', '/v1/password-resets/confirm', { token: links[1], password: newer }))
        .status,
    ).toBe(200);
    expect((await call({}, 'POST', '/v1/sessions', { email, password: newer })).status).toBe(201);
  });

  it('logs out on the server: the copied cookie stops working at once', async () => {
    const browser = await signedUp(`logout.${storage}@example.eu`);
    const copied = browser.cookie;
    const out = await call(browser, 'DELETE', '/v1/sessions/current');
    expect(out.status).toBe(204);
    expect(out.setCookie).toMatch(/^eurus_session=; .*Max-Age=0/);
    const after = await call({ cookie: copied }, 'GET', '/v1/keys');
    expect(after.status).toBe(401);
    expect(after.json?.error?.code).toBe('invalid_session');
    const none = await call(undefined, 'GET', '/v1/sessions/current');
    expect(none.json?.error?.code).toBe('missing_session');
    // The bearer key path is unchanged: no key, no cookie, the key's own error.
    expect((await call(undefined, 'GET', '/v1/keys')).json?.error?.code).toBe('missing_api_key');
  });
});
