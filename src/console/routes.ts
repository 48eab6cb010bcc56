// The console's own operations (tag Console of the model spec): sign-up, email verification,
// log in and out, password reset. Everything else the console does (projects, keys, usage) is
// the public API, called with the session cookie instead of a key (session.ts).
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Session } from '../../generated/model/client/types.gen.ts';
import type { Bucket, Limiter } from '../limits/limiter.ts';
import { refusal, setRateLimitHeaders } from '../limits/middleware.ts';
import type { Mailer } from '../mail/outbox.ts';
import {
  AuthenticationError,
  BadRequestError,
  PermissionDeniedError,
  RateLimitError,
} from '../platform/errors.ts';
import { operationRouter, type OperationRouter } from '../platform/route.ts';
import { LoginThrottle } from './login-throttle.ts';
import { checkStrength, decoyHash, hashPassword, verifyPassword } from './passwords.ts';
import {
  cookieOf,
  refuseCrossSite,
  SESSION_COOKIE,
  sessionCookie,
  sessionOf,
  VERIFY_BROWSER_COOKIE,
  verifyBrowserCookie,
} from './session.ts';
import { type ConsoleStore, csrfTokenOf, normalizeEmail, type SessionRow, type UserRow } from './store.ts';

export interface ConsoleRoutesOptions {
  store: ConsoleStore;
  limiter: Limiter;
  mailer: Mailer;
  /** Where the console is reached, e.g. `https://model.api.eurus.eu/console`: links in mail point here. */
  consoleUrl: string;
}

/** `count` attempts per `seconds`, refilled continuously. */
function perWindow(name: string, count: number, seconds: number): Bucket {
  return { name, rate: count / seconds, capacity: count, window: seconds, quota: count };
}

// Attempts from one address, whatever the account: bounds the load and the guessing of one
// address across accounts. Failures on one account are slowed per (account, address) in
// login-throttle.ts: a per-account bucket would let anyone lock the owner out.
const LOGIN_PER_IP = perWindow('login-ip', 30, 900);
const SIGNUP_PER_IP = perWindow('signup-ip', 30, 3600);
/** Link tokens are 256-bit: this bounds the load, not the guessing, which cannot succeed. */
const LINKS_PER_IP = perWindow('links-ip', 60, 900);
const RESET_PER_EMAIL = perWindow('reset-email', 3, 3600);
const RESET_PER_IP = perWindow('reset-ip', 20, 3600);

function sessionBody(token: string, row: SessionRow): Session {
  return {
    object: 'session',
    account_id: row.account_id,
    email: row.email,
    csrf_token: csrfTokenOf(token),
    created: row.created,
    expires_at: row.expires_at,
  };
}

/** A 429 for a pair of account and address that failed too often: wait `ms`. */
function slowDown(ms: number): RateLimitError {
  return new RateLimitError(
    'rate_limit_exceeded',
    'Too many failed log-ins for this address from where you are: wait before trying again (the wait doubles with each further failure).',
    { headers: { 'Retry-After': String(Math.max(1, Math.ceil(ms / 1000))), 'retry-after-ms': String(ms) } },
  );
}

export function createConsoleRouter(options: ConsoleRoutesOptions) {
  const { store, limiter, mailer, consoleUrl } = options;
  const logins = new LoginThrottle(store.db);
  const secure = consoleUrl.startsWith('https:');
  const publicOrigin = new URL(consoleUrl).origin;
  const api: OperationRouter = operationRouter();

  /** Takes one attempt from each (key, bucket); a 429 when any is spent. */
  async function throttle(res: Response, what: string, takes: Array<[string, Bucket]>): Promise<void> {
    const states = [];
    const namespace = await store.throttleNamespace();
    for (const [key, bucket] of takes) {
      const result = await limiter.take(`console:${namespace}:${bucket.name}:${key}`, [bucket]);
      states.push(...result.states);
      if (!result.ok) {
        setRateLimitHeaders(res, states);
        throw refusal(result, what);
      }
    }
    setRateLimitHeaders(res, states);
  }

  const ipOf = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';

  /** A new session for the user, replacing any session the browser already had. */
  async function startSession(req: Request, user: UserRow) {
    const planted = cookieOf(req, SESSION_COOKIE);
    if (planted) await store.deleteSession(planted);
    const { token, row } = await store.createSession(user);
    return {
      status: 201 as const,
      headers: { 'Set-Cookie': sessionCookie(token, secure), 'Cache-Control': 'no-store' },
      body: sessionBody(token, row),
    };
  }

  api.on('createSignUp', async ({ body, req, res }) => {
    refuseCrossSite(req, publicOrigin);
    await throttle(res, 'sign-ups from this address', [[ipOf(req), SIGNUP_PER_IP]]);
    const email = normalizeEmail(body.email);
    checkStrength(body.password, email);
    const user = await store.createUser(email, await hashPassword(body.password));
    // this browser asked for the link: opened here, it signs in; anywhere else it only verifies
    // (set in both cases, so the answer still never tells whether the address is taken)
    const browser = randomBytes(32).toString('base64url');
    res.append('Set-Cookie', verifyBrowserCookie(browser, secure));
    if (user) {
      const token = await store.createToken(user.id, 'verify_email', browser);
      await mailer.send({
        to: email,
        subject: 'Verify your email address for the Eurus console',
        text: [
          'Welcome to Eurus.',
          '',
          'Open this link to verify your address and sign in (it works once, for 24 hours):',
          '',
          `${consoleUrl}/verify?token=${token}`,
          '',
          'If you did not sign up, ignore this mail: nothing happens without the link.',
        ].join('\n'),
      });
    } else {
      await mailer.send({
        to: email,
        subject: 'You already have a Eurus console account',
        text: [
          'Someone (perhaps you) tried to sign up with this address, which already has an account.',
          '',
          `Log in at ${consoleUrl}/login, or reset your password at ${consoleUrl}/reset.`,
        ].join('\n'),
      });
    }
    return { status: 202, body: { object: 'sign_up', email, status: 'verification_sent' } };
  });

  api.on('verifyEmail', async ({ body, req, res }) => {
    refuseCrossSite(req, publicOrigin);
    await throttle(res, 'link checks from this address', [[ipOf(req), LINKS_PER_IP]]);
    const used = await store.useTokenFrom(body.token, 'verify_email', cookieOf(req, VERIFY_BROWSER_COOKIE));
    if (!used) {
      throw new BadRequestError(
        'invalid_token',
        'This verification link is unknown, already used or expired. Log in to get a new one sent.',
        { param: 'token' },
      );
    }
    await store.markVerified(used.user.id);
    // Only the browser that asked for the link is signed in by it: a link someone mailed to a
    // victim must not sign the victim into the sender's account (login CSRF through a link).
    if (used.sameBrowser) return startSession(req, used.user);
    return {
      status: 200 as const,
      headers: { 'Cache-Control': 'no-store' },
      body: { object: 'email_verification' as const, email: used.user.email, status: 'verified' as const },
    };
  });

  api.on('createSession', async ({ body, req, res }) => {
    refuseCrossSite(req, publicOrigin);
    const email = normalizeEmail(body.email);
    const address = ipOf(req);
    await throttle(res, 'log-in attempts', [[address, LOGIN_PER_IP]]);
    const wait = await logins.waitMs(email, address);
    if (wait > 0) throw slowDown(wait);
    const user = await store.userByEmail(email);
    const ok = await verifyPassword(body.password, user?.password_hash ?? (await decoyHash()));
    if (!user || !ok) {
      await logins.failed(email, address);
      throw new AuthenticationError('invalid_credentials', 'The email address or the password is wrong.');
    }
    await logins.succeeded(email, address);
    if (user.email_verified_at === null) {
      const browser = randomBytes(32).toString('base64url');
      res.append('Set-Cookie', verifyBrowserCookie(browser, secure));
      const token = await store.createToken(user.id, 'verify_email', browser);
      await mailer.send({
        to: email,
        subject: 'Verify your email address for the Eurus console',
        text: `Open this link to verify your address and sign in (it works once, for 24 hours):\n\n${consoleUrl}/verify?token=${token}\n`,
      });
      throw new PermissionDeniedError(
        'email_not_verified',
        'The email address is not verified yet: a new verification link has been mailed to it.',
      );
    }
    return startSession(req, user);
  });

  api.on('getSession', ({ res }) => {
    const { token, row } = sessionOf(res);
    return { status: 200, headers: { 'Cache-Control': 'no-store' }, body: sessionBody(token, row) };
  });

  api.on('deleteSession', async ({ res }) => {
    await store.deleteSession(sessionOf(res).token);
    return { status: 204, headers: { 'Set-Cookie': sessionCookie(undefined, secure) }, body: undefined };
  });

  api.on('createPasswordReset', async ({ body, req, res }) => {
    refuseCrossSite(req, publicOrigin);
    const email = normalizeEmail(body.email);
    await throttle(res, 'password resets', [
      [ipOf(req), RESET_PER_IP],
      [email, RESET_PER_EMAIL],
    ]);
    const user = await store.userByEmail(email);
    if (user) {
      const token = await store.createToken(user.id, 'reset_password');
      await mailer.send({
        to: email,
        subject: 'Reset your Eurus console password',
        text: [
          'Open this link to choose a new password (it works once, for 1 hour):',
          '',
          `${consoleUrl}/reset?token=${token}`,
          '',
          'If you did not ask for this, ignore this mail: your password stays as it is.',
        ].join('\n'),
      });
    }
    return { status: 202, body: { object: 'password_reset', status: 'sent' } };
  });

  api.on('confirmPasswordReset', async ({ body, req, res }) => {
    refuseCrossSite(req, publicOrigin);
    await throttle(res, 'link checks from this address', [[ipOf(req), LINKS_PER_IP]]);
    const invalid = () =>
      new BadRequestError('invalid_token', 'This reset link is unknown, already used or expired.', {
        param: 'token',
      });
    const holder = await store.tokenUser(body.token, 'reset_password');
    if (!holder) throw invalid();
    checkStrength(body.password, holder.email);
    const user = await store.useToken(body.token, 'reset_password');
    if (!user) throw invalid();
    await store.setPassword(user.id, await hashPassword(body.password));
    await store.markVerified(user.id);
    await store.deleteSessionsOf(user.id);
    return { status: 200, body: { object: 'password_reset', status: 'completed' } };
  });

  return api;
}
