// The bearer security handler of both services. express-openapi-validator calls it for every
// secured operation, before request validation, with the scopes the spec's security
// requirement names: so every route checks its scope because the spec says which.
import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import { ApiError, AuthenticationError, PermissionDeniedError } from '../platform/errors.ts';
import type { CustomLimits, Principal } from '../platform/principal.ts';
import type { Bus } from './bus.ts';
import { hashSecret } from './key-secrets.ts';
import type { AccountStore, AuthenticatedKey } from './store.ts';
import { nowSeconds } from '../platform/clock.ts';

const CACHE_TTL_MS = 30_000;
const TOUCH_EVERY_S = 60;

interface Cached {
  key: AuthenticatedKey;
  plan: string;
  limits: CustomLimits | undefined;
  at: number;
  /** The bus epoch read before this entry was fetched. */
  epoch: number;
}

export interface Authenticator {
  /** The handler for `securityHandlers.BearerAuth`. */
  handler: (req: Request, scopes: string[]) => Promise<boolean>;
  /** Drops a key from every instance's cache (revocation, rotation). */
  invalidate(keyId: string): Promise<void>;
  /** Drops every key of an account from every instance's cache (its custom limits changed). */
  invalidateAccount(accountId: string): Promise<void>;
  /**
   * The caller of a secret sent another way than a request's Authorization header (a WebSocket's
   * subprotocol), with the same checks: 401 for a bad key, 403 naming a missing scope.
   */
  principalOf(secret: string, scopes: string[], operation: string): Promise<Principal>;
}

function bearerOf(req: Request): string {
  const header = req.get('authorization');
  if (!header) {
    throw new AuthenticationError(
      'missing_api_key',
      'No API key was sent. Send it as `Authorization: Bearer <secret>`.',
    );
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) {
    throw new AuthenticationError(
      'invalid_authorization_header',
      'The Authorization header must be `Bearer <secret>`.',
    );
  }
  return match[1];
}

/** An account's custom limits (src/limits/account-limits.ts), read with its keys. */
export type LimitsOfAccount = (accountId: string) => Promise<CustomLimits | undefined>;

/** What the bus carries for an account, beside key ids. */
const ACCOUNT = 'account:';

export function createAuthenticator(
  store: AccountStore,
  bus: Bus,
  limitsOf: LimitsOfAccount = async () => undefined,
): Authenticator {
  // the keys used last; each entry is trusted for CACHE_TTL_MS and while the revocation epoch holds
  const cache = new LRUCache<string, Cached>({ max: 10_000 });
  const touched = new Map<string, number>();
  const drop = (message: string) => {
    const account = message.startsWith(ACCOUNT) ? message.slice(ACCOUNT.length) : undefined;
    for (const [hash, entry] of cache) {
      if (account === undefined ? entry.key.row.id === message : entry.key.row.account_id === account)
        cache.delete(hash);
    }
  };
  bus.subscribe(drop);

  async function lookup(secret: string): Promise<Cached | undefined> {
    const hash = hashSecret(secret);
    // Read before the cache is trusted (and before the database), so an entry is never newer
    // than its epoch; an unreadable epoch (Redis down) means the database decides.
    const epoch = await bus.epoch().catch(() => Number.NaN);
    const hit = cache.get(hash);
    if (hit && hit.epoch === epoch && Date.now() - hit.at < CACHE_TTL_MS) return hit;
    const key = await store.findBySecret(secret);
    if (!key) {
      cache.delete(hash);
      return undefined;
    }
    const [plan, limits] = await Promise.all([
      store.accountPlan(key.row.account_id),
      limitsOf(key.row.account_id),
    ]);
    const entry = { key, plan, limits, at: Date.now(), epoch };
    cache.set(hash, entry);
    return entry;
  }

  async function authenticate(req: Request, scopes: string[]): Promise<Principal> {
    return authenticateSecret(bearerOf(req), scopes, `${req.method} ${req.baseUrl}${req.path}`);
  }

  async function authenticateSecret(secret: string, scopes: string[], operation: string): Promise<Principal> {
    const found = await lookup(secret);
    const invalid = () =>
      new AuthenticationError(
        'invalid_api_key',
        'The API key is not valid: it does not exist, was revoked, expired, or was replaced by a rotation.',
      );
    if (!found) throw invalid();
    const { row, viaPreviousSecret } = found.key;
    const now = nowSeconds();
    if (row.status !== 'active' || (row.expires_at !== null && row.expires_at <= now)) throw invalid();
    if (
      viaPreviousSecret &&
      !(row.previous_secret_expires_at !== null && row.previous_secret_expires_at > now)
    ) {
      throw invalid();
    }
    const missing = scopes.filter((scope) => !row.scopes.includes(scope));
    if (missing.length > 0) {
      throw new PermissionDeniedError(
        'insufficient_scope',
        `This key lacks the scope '${missing.join("', '")}' needed for ${operation}.`,
      );
    }
    if ((touched.get(row.id) ?? 0) + TOUCH_EVERY_S <= now) {
      touched.set(row.id, now);
      store.touch(row.id, now).catch(() => touched.delete(row.id));
    }
    return {
      accountId: row.account_id,
      projectId: row.project_id,
      keyId: row.id,
      // stored as the spec's Scope values: createKey's body was validated against the enum
      scopes: row.scopes as Principal['scopes'],
      plan: found.plan,
      limits: found.limits,
    };
  }

  return {
    async handler(req, scopes) {
      try {
        const principal = await authenticate(req, scopes);
        if (req.res) req.res.locals.principal = principal;
        return true;
      } catch (err) {
        // The validator rebuilds thrown errors from status and message only; keep ours for the handler.
        if (req.res && err instanceof ApiError) req.res.locals.authError = err;
        throw err;
      }
    },
    principalOf: authenticateSecret,
    async invalidate(keyId) {
      drop(keyId);
      await bus.publish(keyId);
    },
    async invalidateAccount(accountId) {
      drop(`${ACCOUNT}${accountId}`);
      await bus.publish(`${ACCOUNT}${accountId}`);
    },
  };
}
