// Console users, sessions and link tokens. A user belongs to one account (made at sign-up with
// its default project by AccountStore.createAccount); a session acts for that account. Session
// secrets and link tokens are 256-bit random strings kept as SHA-256 only (like API keys: with
// that much entropy a slow hash adds nothing); passwords as scrypt (passwords.ts).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type AccountStore, removeKeylessAccount } from '../accounts/store.ts';
import { nowSeconds } from '../platform/clock.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { newId } from '../platform/ids.ts';

export const SESSION_TTL_S = 7 * 24 * 3600;
const VERIFY_TTL_S = 24 * 3600;
const RESET_TTL_S = 3600;

export type TokenPurpose = 'verify_email' | 'reset_password';

export interface UserRow {
  id: string;
  account_id: string;
  email: string;
  password_hash: string;
  email_verified_at: number | null;
  created: number;
}

export interface SessionRow {
  token_hash: string;
  user_id: string;
  account_id: string;
  email: string;
  created: number;
  expires_at: number;
}

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

/** A fresh secret: `prefix` and 43 base64url characters (256 bits from the CSPRNG). */
export const mintToken = (prefix: string) => `${prefix}_${randomBytes(32).toString('base64url')}`;

/**
 * The CSRF token of a session (synchronizer token pattern, derived rather than stored): the
 * SHA-256 of the session secret under a label. Only who holds the cookie's secret (the server,
 * or the page the server handed it to) can know it; a cross-site form can send the cookie but
 * never this header.
 */
export function csrfTokenOf(sessionToken: string): string {
  return createHash('sha256').update(`csrf\0${sessionToken}`, 'utf8').digest('base64url');
}

export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * This installation's name for its console throttles (migration 0700 makes it): made when missing,
 * as in a database that started as the demo directory made at install, which holds none.
 */
export async function ensureThrottleNamespace(db: Queryable): Promise<void> {
  await db.query(
    `insert into console_settings (name, value) values ('throttle_namespace', md5(random()::text || clock_timestamp()::text))
     on conflict (name) do nothing`,
  );
}

/** Forgets the installation's throttle name: a database copied to other installations holds none. */
export async function forgetThrottleNamespace(db: Queryable): Promise<void> {
  await db.query(`delete from console_settings where name = 'throttle_namespace'`);
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export class ConsoleStore {
  readonly db: Db;
  readonly accounts: AccountStore;

  constructor(db: Db, accounts: AccountStore) {
    this.db = db;
    this.accounts = accounts;
  }

  private namespace: Promise<string> | undefined;

  /** This installation's name for its throttles in the limiter (see migration 0700). */
  throttleNamespace(): Promise<string> {
    this.namespace ??= this.db
      .query<{ value: string }>(`select value from console_settings where name = 'throttle_namespace'`)
      .then((rows) => rows[0]?.value ?? 'default');
    return this.namespace;
  }

  async userByEmail(email: string): Promise<UserRow | undefined> {
    const [row] = await this.db.query<UserRow>('select * from console_users where email = $1', [
      normalizeEmail(email),
    ]);
    return row;
  }

  /** A new user with a new account (and its default project); undefined if the email is taken. */
  async createUser(email: string, passwordHash: string): Promise<UserRow | undefined> {
    const normalized = normalizeEmail(email);
    if (await this.userByEmail(normalized)) return undefined;
    const { accountId } = await this.accounts.createAccount(normalized);
    const row: UserRow = {
      id: newId('usr'),
      account_id: accountId,
      email: normalized,
      password_hash: passwordHash,
      email_verified_at: null,
      created: nowSeconds(),
    };
    const inserted = await this.db.query(
      `insert into console_users (id, account_id, email, password_hash, created) values ($1, $2, $3, $4, $5)
       on conflict (email) do nothing returning id`,
      [row.id, row.account_id, row.email, row.password_hash, row.created],
    );
    if (inserted.length === 1) return row;
    // Another sign-up of the same address won the race: its account stands, this one goes.
    await this.db.transaction((tx) => removeKeylessAccount(tx, accountId));
    return undefined;
  }

  /** A new password kills every reset link of the user still open: an older mail must not reset it again. */
  async setPassword(userId: string, passwordHash: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query('update console_users set password_hash = $2 where id = $1', [userId, passwordHash]);
      await tx.query(`delete from console_tokens where user_id = $1 and purpose = 'reset_password'`, [
        userId,
      ]);
    });
  }

  async markVerified(userId: string): Promise<void> {
    await this.db.query(
      'update console_users set email_verified_at = coalesce(email_verified_at, $2) where id = $1',
      [userId, nowSeconds()],
    );
  }

  // Link tokens (verification, password reset): single use, expiring.

  /** A single-use token; `browser` is the secret of the cookie of the browser that asked for it. */
  async createToken(userId: string, purpose: TokenPurpose, browser?: string): Promise<string> {
    const token = mintToken(purpose === 'verify_email' ? 'vt' : 'pr');
    const now = nowSeconds();
    await this.db.transaction(async (tx) => {
      // The user's spent tokens go, and every unused one of the same purpose: only the link sent
      // last works (an older reset link found in a mailbox later opens nothing).
      await tx.query(
        'delete from console_tokens where user_id = $1 and (used_at is not null or expires_at <= $2 or purpose = $3)',
        [userId, now, purpose],
      );
      await tx.query(
        'insert into console_tokens (token_hash, user_id, purpose, created, expires_at, browser_hash) values ($1, $2, $3, $4, $5, $6)',
        [
          sha256(token),
          userId,
          purpose,
          now,
          now + (purpose === 'verify_email' ? VERIFY_TTL_S : RESET_TTL_S),
          browser === undefined ? null : sha256(browser),
        ],
      );
    });
    return token;
  }

  /** The user a usable token is for, without using it up. */
  async tokenUser(token: string, purpose: TokenPurpose): Promise<UserRow | undefined> {
    const [user] = await this.db.query<UserRow>(
      `select u.* from console_tokens t join console_users u on u.id = t.user_id
       where t.token_hash = $1 and t.purpose = $2 and t.used_at is null and t.expires_at > $3`,
      [sha256(token), purpose, nowSeconds()],
    );
    return user;
  }

  /** Uses a token up: the user it was for, or undefined if unknown, used, expired or of another purpose. */
  async useToken(token: string, purpose: TokenPurpose, browser?: string): Promise<UserRow | undefined> {
    return (await this.useTokenFrom(token, purpose, browser))?.user;
  }

  /**
   * Uses up a token: its user, and whether `browser` (the cookie's secret) is the browser that
   * asked for the token.
   */
  async useTokenFrom(
    token: string,
    purpose: TokenPurpose,
    browser: string | undefined,
  ): Promise<{ user: UserRow; sameBrowser: boolean } | undefined> {
    const now = nowSeconds();
    const [used] = await this.db.query<{ user_id: string; browser_hash: string | null }>(
      `update console_tokens set used_at = $3
       where token_hash = $1 and purpose = $2 and used_at is null and expires_at > $3 returning user_id, browser_hash`,
      [sha256(token), purpose, now],
    );
    if (!used) return undefined;
    const [user] = await this.db.query<UserRow>('select * from console_users where id = $1', [used.user_id]);
    if (!user) return undefined;
    const sameBrowser =
      browser !== undefined && used.browser_hash !== null && sha256(browser) === used.browser_hash;
    return { user, sameBrowser };
  }

  // Sessions

  /** A new session with a new secret (never one the client chose: no session fixation). */
  async createSession(user: UserRow): Promise<{ token: string; row: SessionRow }> {
    const token = mintToken('ses');
    const created = nowSeconds();
    // The user's ended sessions go first, so the table holds only live ones.
    await this.db.query('delete from console_sessions where user_id = $1 and expires_at <= $2', [
      user.id,
      created,
    ]);
    const row: SessionRow = {
      token_hash: sha256(token),
      user_id: user.id,
      account_id: user.account_id,
      email: user.email,
      created,
      expires_at: created + SESSION_TTL_S,
    };
    await this.db.query(
      'insert into console_sessions (token_hash, user_id, account_id, created, expires_at) values ($1, $2, $3, $4, $5)',
      [row.token_hash, row.user_id, row.account_id, row.created, row.expires_at],
    );
    return { token, row };
  }

  async findSession(token: string): Promise<SessionRow | undefined> {
    const [row] = await this.db.query<SessionRow>(
      `select s.token_hash, s.user_id, s.account_id, u.email, s.created, s.expires_at
       from console_sessions s join console_users u on u.id = s.user_id
       where s.token_hash = $1 and s.expires_at > $2`,
      [sha256(token), nowSeconds()],
    );
    return row;
  }

  async deleteSession(token: string): Promise<void> {
    await this.db.query('delete from console_sessions where token_hash = $1', [sha256(token)]);
  }

  async deleteSessionsOf(userId: string): Promise<void> {
    await this.db.query('delete from console_sessions where user_id = $1', [userId]);
  }
}
