// The console's security scheme (`SessionCookie` in the model spec): the session cookie, and on
// every request that changes something the session's CSRF token in `X-CSRF-Token`. It sets the
// same Principal as a bearer key with the `admin` scope, so keys, projects and usage need no
// second code path. express-openapi-validator runs it beside BearerAuth where an operation
// accepts either (`security: [{BearerAuth: [admin]}, {SessionCookie: []}]`) and passes the
// request when either succeeds.
import type { Request, Response } from 'express';
import type { AccountStore } from '../accounts/store.ts';
import { ApiError, AuthenticationError, NotFoundError, PermissionDeniedError } from '../platform/errors.ts';
import type { Principal } from '../platform/principal.ts';
import { type ConsoleStore, csrfTokenOf, SESSION_TTL_S, type SessionRow, sameToken } from './store.ts';

declare global {
  namespace Express {
    interface Locals {
      /** The console session the security handler found (beside its principal). */
      consoleSession?: ConsoleSession;
    }
  }
}

export const SESSION_COOKIE = 'eurus_session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The value of one cookie of the request (the platform parses the Cookie header into req.cookies). */
export function cookieOf(req: Request, name: string): string | undefined {
  const value = (req.cookies as Record<string, string> | undefined)?.[name];
  return value ? value : undefined;
}

/**
 * The cookie of the browser that asked for a verification link (sign-up, or a log-in before the
 * address is verified): only that browser is signed in by the link. Sent to the verification
 * operation alone, for the link's lifetime.
 */
export const VERIFY_BROWSER_COOKIE = 'eurus_verify';

export function verifyBrowserCookie(secret: string, secure: boolean): string {
  const attributes = [
    `${VERIFY_BROWSER_COOKIE}=${secret}`,
    'Path=/v1/email-verifications',
    'HttpOnly',
    'SameSite=Lax',
    'Max-Age=86400',
  ];
  if (secure) attributes.push('Secure');
  return attributes.join('; ');
}

/** The Set-Cookie value for a session secret, or one that clears it (`token` undefined). */
export function sessionCookie(token: string | undefined, secure: boolean): string {
  const attributes = [
    `${SESSION_COOKIE}=${token ?? ''}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${token ? SESSION_TTL_S : 0}`,
  ];
  if (secure) attributes.push('Secure');
  return attributes.join('; ');
}

export interface ConsoleSession {
  token: string;
  row: SessionRow;
}

/** The session the security handler found for this request. */
export function sessionOf(res: Response): ConsoleSession {
  const session = res.locals.consoleSession;
  if (!session) throw new Error('sessionOf: no session; is this operation secured by SessionCookie?');
  return session;
}

/** Whether an Origin header, when sent, names the site the request came to (a second CSRF fence). */
function sameOrigin(req: Request): boolean {
  const origin = req.get('origin');
  if (!origin) return true;
  try {
    return new URL(origin).host === req.get('host');
  } catch {
    return false;
  }
}

/**
 * The fence of the console's forms that need no session (log in, sign up, verify, reset): a
 * browser request from another site is refused, so no page elsewhere can log a visitor in to an
 * account of its choosing (login CSRF) or post the forms in their name. A browser says where a
 * request comes from (`Sec-Fetch-Site`, `Origin`); clients that are not browsers send neither.
 */
export function refuseCrossSite(req: Request, publicOrigin: string): void {
  const site = req.get('sec-fetch-site');
  const origin = req.get('origin');
  const crossSite = site !== undefined && site !== 'same-origin' && site !== 'none';
  let foreign = false;
  if (origin !== undefined) {
    try {
      foreign = new URL(origin).host !== req.get('host') && new URL(origin).origin !== publicOrigin;
    } catch {
      foreign = true;
    }
  }
  if (crossSite || foreign) {
    throw new PermissionDeniedError(
      'cross_site_request',
      "The console's forms are posted from the console's own pages only; this request came from another site.",
    );
  }
}

export interface SessionHandlerOptions {
  /**
   * Another origin changes may come from besides the service's own: the console's, for the
   * directory API, which the console calls across origins (src/console/cors.ts).
   */
  consoleOrigin?: (req: Request, origin: string) => boolean;
}

/** The header a session names the project it acts in with (the account's default project without it). */
export const PROJECT_HEADER = 'eurus-project';

export function createSessionHandler(
  store: ConsoleStore,
  accounts: AccountStore,
  options: SessionHandlerOptions = {},
) {
  const trusted = (req: Request): boolean => {
    if (sameOrigin(req)) return true;
    const origin = req.get('origin');
    return origin !== undefined && options.consoleOrigin?.(req, origin) === true;
  };
  async function authenticate(req: Request): Promise<{ principal: Principal; session: ConsoleSession }> {
    const token = cookieOf(req, SESSION_COOKIE);
    if (!token) throw new AuthenticationError('missing_session', 'No console session: log in at /console.');
    const row = await store.findSession(token);
    if (!row) {
      throw new AuthenticationError(
        'invalid_session',
        'The console session has ended or never existed: log in again at /console.',
      );
    }
    if (!SAFE_METHODS.has(req.method)) {
      const sent = req.get('x-csrf-token') ?? '';
      if (!trusted(req) || !sameToken(sent, csrfTokenOf(token))) {
        throw new PermissionDeniedError(
          'csrf_token_invalid',
          "This request changes something and needs the session's csrf_token in the X-CSRF-Token header, sent from the console's own origin.",
        );
      }
    }
    // a project of the account, named by the console (webhook endpoints belong to one)
    const named = req.get(PROJECT_HEADER);
    const projectId = named
      ? (
          await accounts.getProject(row.account_id, named).catch(() => {
            throw new NotFoundError(
              'project_not_found',
              `No project ${named} in this account (named by the Eurus-Project header).`,
            );
          })
        ).id
      : await accounts.defaultProject(row.account_id);
    const principal: Principal = {
      accountId: row.account_id,
      projectId,
      keyId: `session:${row.user_id}`,
      scopes: ['admin'],
      plan: await accounts.accountPlan(row.account_id),
    };
    return { principal, session: { token, row } };
  }

  return async (req: Request): Promise<boolean> => {
    // A request with a bearer key is judged by the key alone, never by a cookie beside it.
    if (req.get('authorization')) throw new AuthenticationError('bearer_sent', 'A bearer key was sent.');
    try {
      const { principal, session } = await authenticate(req);
      if (req.res) {
        req.res.locals.principal = principal;
        req.res.locals.consoleSession = session;
      }
      return true;
    } catch (err) {
      // The validator rebuilds thrown errors from status and message only; keep ours for the handler.
      if (req.res && err instanceof ApiError) req.res.locals.authError = err;
      throw err;
    }
  };
}
