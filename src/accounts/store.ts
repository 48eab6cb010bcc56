// Accounts, projects and API keys. Every read and write is scoped by account: a key never sees
// another account's keys or projects, and asking for one answers 404, as for one that never existed.
import { ScopeSchema } from '../../generated/model/client/schemas.gen.ts';
import type { Key, KeyWithSecret, Project } from '../../generated/model/client/types.gen.ts';
import { nowSeconds } from '../platform/clock.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { type Page, pageNewestFirst } from '../platform/pagination.ts';
import { hashSecret, mintSecret, previewOf } from './key-secrets.ts';

/** Every scope of the spec's shared Scope enum. */
export const ALL_SCOPES: readonly string[] = ScopeSchema.enum;

interface KeyRow {
  id: string;
  account_id: string;
  project_id: string;
  name: string;
  scopes: string[];
  preview: string;
  status: string;
  created: number;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
  rotated_at: number | null;
  previous_secret_expires_at: number | null;
}

interface ProjectRow {
  id: string;
  account_id: string;
  name: string;
  metadata: Record<string, string>;
  is_default: boolean;
  created: number;
}

const KEY_COLUMNS =
  'id, account_id, project_id, name, scopes, preview, status, created, last_used_at, expires_at, revoked_at, rotated_at, previous_secret_expires_at';

function keyStatus(row: KeyRow, now: number): Key['status'] {
  if (row.status === 'revoked') return 'revoked';
  if (row.expires_at !== null && row.expires_at <= now) return 'expired';
  return 'active';
}

export function toKey(row: KeyRow, now = nowSeconds()): Key {
  return {
    id: row.id,
    object: 'api_key',
    name: row.name,
    project_id: row.project_id,
    account_id: row.account_id,
    scopes: row.scopes as Key['scopes'],
    preview: row.preview,
    status: keyStatus(row, now),
    created: row.created,
    last_used_at: row.last_used_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    rotated_at: row.rotated_at,
    previous_secret_expires_at:
      row.previous_secret_expires_at !== null && row.previous_secret_expires_at > now
        ? row.previous_secret_expires_at
        : null,
  };
}

function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    object: 'project',
    name: row.name,
    metadata: row.metadata,
    created: row.created,
    is_default: row.is_default,
  };
}

export interface AuthenticatedKey {
  row: KeyRow;
  /** The presented secret is the previous one, accepted during a rotation's grace period. */
  viaPreviousSecret: boolean;
}

/** The ids of the account's keys, live or not (erasure and a plan change drop them from every cache). */
export async function keyIdsOf(q: Queryable, accountId: string): Promise<string[]> {
  const rows = await q.query<{ id: string }>('select id from api_keys where account_id = $1', [accountId]);
  return rows.map((r) => r.id);
}

/** Sets an account's plan (in the caller's transaction); with `from`, only while it is that plan. */
export async function setPlan(q: Queryable, accountId: string, plan: string, from?: string): Promise<void> {
  if (from === undefined) await q.query('update accounts set plan = $2 where id = $1', [accountId, plan]);
  else await q.query('update accounts set plan = $2 where id = $1 and plan = $3', [accountId, plan, from]);
}

/** When an account was made (Unix seconds), or undefined when there is no such account. */
export async function accountCreated(q: Queryable, accountId: string): Promise<number | undefined> {
  const [row] = await q.query<{ created: string | number }>('select created from accounts where id = $1', [
    accountId,
  ]);
  return row ? Number(row.created) : undefined;
}

/** Removes an account that has no keys yet, with its projects (a sign-up that lost a race). */
export async function removeKeylessAccount(q: Queryable, accountId: string): Promise<void> {
  await q.query('delete from projects where account_id = $1', [accountId]);
  await q.query('delete from accounts where id = $1', [accountId]);
}

export class AccountStore {
  readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async createAccount(name: string, plan = 'standard'): Promise<{ accountId: string; projectId: string }> {
    const accountId = newId('acct');
    const projectId = newId('proj');
    const created = nowSeconds();
    await this.db.transaction(async (tx) => {
      await tx.query('insert into accounts (id, name, plan, created) values ($1, $2, $3, $4)', [
        accountId,
        name,
        plan,
        created,
      ]);
      await tx.query(
        'insert into projects (id, account_id, name, is_default, created) values ($1, $2, $3, true, $4)',
        [projectId, accountId, 'Default project', created],
      );
    });
    return { accountId, projectId };
  }

  /** The id of the first account named `name`, if there is one (service accounts go by name). */
  async accountNamed(name: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ id: string }>('select id from accounts where name = $1 limit 1', [
      name,
    ]);
    return row?.id;
  }

  /**
   * BOOTSTRAP_ADMIN_KEY: makes sure a key with exactly this secret exists, with every scope,
   * on the bootstrap account. Idempotent, safe when several instances start at once.
   */
  async ensureBootstrapKey(secret: string): Promise<Key> {
    return this.db.transaction(async (tx) => {
      await tx.query('select pg_advisory_xact_lock(727275)');
      return this.bootstrapIn(tx, secret, 'Bootstrap admin key');
    });
  }

  /**
   * The first start of an empty database with no BOOTSTRAP_ADMIN_KEY: an admin key with every
   * scope and a fresh secret, returned this once (stored hashed like every key). Undefined when
   * any account exists; of several instances starting at once, exactly one creates it.
   */
  async firstRunKey(): Promise<{ key: Key; secret: string } | undefined> {
    return this.db.transaction(async (tx) => {
      await tx.query('select pg_advisory_xact_lock(727275)');
      const [any] = await tx.query('select 1 from accounts limit 1');
      if (any) return undefined;
      const secret = mintSecret();
      return { key: await this.bootstrapIn(tx, secret, 'First-run admin key'), secret };
    });
  }

  /** A key with exactly this secret and every scope on the bootstrap account, made or revived. */
  private async bootstrapIn(tx: Queryable, secret: string, name: string): Promise<Key> {
    const hash = hashSecret(secret);
    const existing = await tx.query<KeyRow>(`select ${KEY_COLUMNS} from api_keys where secret_hash = $1`, [
      hash,
    ]);
    if (existing[0]) {
      if (existing[0].status === 'revoked' || existing[0].expires_at !== null) {
        await tx.query(
          `update api_keys set status = 'active', revoked_at = null, expires_at = null where id = $1`,
          [existing[0].id],
        );
      }
      const [row] = await tx.query<KeyRow>(`select ${KEY_COLUMNS} from api_keys where id = $1`, [
        existing[0].id,
      ]);
      return toKey(row as KeyRow);
    }
    const created = nowSeconds();
    let [account] = await tx.query<{ id: string }>(
      `select id from accounts where name = 'bootstrap' limit 1`,
    );
    if (!account) {
      account = { id: newId('acct') };
      await tx.query(
        `insert into accounts (id, name, plan, created) values ($1, 'bootstrap', 'standard', $2)`,
        [account.id, created],
      );
      await tx.query(
        `insert into projects (id, account_id, name, is_default, created) values ($1, $2, 'Default project', true, $3)`,
        [newId('proj'), account.id, created],
      );
    }
    const [project] = await tx.query<{ id: string }>(
      'select id from projects where account_id = $1 and is_default limit 1',
      [account.id],
    );
    const id = newId('key');
    await tx.query(
      `insert into api_keys (id, account_id, project_id, name, scopes, secret_hash, preview, created)
       values ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [id, account.id, project?.id, name, [...ALL_SCOPES], hash, previewOf(secret), created],
    );
    const [row] = await tx.query<KeyRow>(`select ${KEY_COLUMNS} from api_keys where id = $1`, [id]);
    return toKey(row as KeyRow);
  }

  /** The key a secret belongs to, if any (active or not: the caller decides). */
  async findBySecret(secret: string): Promise<AuthenticatedKey | undefined> {
    const hash = hashSecret(secret);
    const rows = await this.db.query<KeyRow & { previous_secret_hash: string | null }>(
      `select ${KEY_COLUMNS}, previous_secret_hash from api_keys where secret_hash = $1 or previous_secret_hash = $1`,
      [hash],
    );
    const row = rows[0];
    if (!row) return undefined;
    return { row, viaPreviousSecret: row.previous_secret_hash === hash };
  }

  async touch(keyId: string, at: number): Promise<void> {
    await this.db.query(
      'update api_keys set last_used_at = $2 where id = $1 and (last_used_at is null or last_used_at < $2)',
      [keyId, at],
    );
  }

  async accountPlan(accountId: string): Promise<string> {
    return (await this.planOf(accountId)) ?? 'standard';
  }

  /** An account's plan, or undefined when there is no such account. */
  async planOf(accountId: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ plan: string }>('select plan from accounts where id = $1', [
      accountId,
    ]);
    return row?.plan;
  }

  /** Whether the account is the operator's: the bootstrap account, of BOOTSTRAP_ADMIN_KEY or the first start's key. */
  async isOperator(accountId: string): Promise<boolean> {
    const [row] = await this.db.query<{ name: string }>('select name from accounts where id = $1', [
      accountId,
    ]);
    return row?.name === 'bootstrap';
  }

  // Projects

  async defaultProject(accountId: string): Promise<string> {
    const [row] = await this.db.query<{ id: string }>(
      'select id from projects where account_id = $1 and is_default limit 1',
      [accountId],
    );
    if (!row) throw new Error(`account ${accountId} has no default project`);
    return row.id;
  }

  async createProject(
    accountId: string,
    name: string,
    metadata: Record<string, string> = {},
  ): Promise<Project> {
    const row: ProjectRow = {
      id: newId('proj'),
      account_id: accountId,
      name,
      metadata,
      is_default: false,
      created: nowSeconds(),
    };
    await this.db.query(
      'insert into projects (id, account_id, name, metadata, is_default, created) values ($1, $2, $3, $4, false, $5)',
      [row.id, accountId, name, JSON.stringify(metadata), row.created],
    );
    return toProject(row);
  }

  async getProject(accountId: string, id: string, tx: Queryable = this.db): Promise<Project> {
    const [row] = await tx.query<ProjectRow>('select * from projects where account_id = $1 and id = $2', [
      accountId,
      id,
    ]);
    if (!row) throw new NotFoundError('not_found', `No project with id '${id}' exists.`, { param: 'id' });
    return toProject(row);
  }

  async listProjects(accountId: string, limit: number, cursor?: string): Promise<Page<Project>> {
    return pageNewestFirst(
      this.db,
      'select * from projects where account_id = $1',
      [accountId],
      { limit, cursor },
      toProject,
    );
  }

  async updateProject(
    accountId: string,
    id: string,
    changes: { name?: string; metadata?: Record<string, string> },
  ): Promise<Project> {
    const [row] = await this.db.query<ProjectRow>(
      `update projects set name = coalesce($3, name), metadata = coalesce($4::jsonb, metadata)
       where account_id = $1 and id = $2 returning *`,
      [accountId, id, changes.name ?? null, changes.metadata ? JSON.stringify(changes.metadata) : null],
    );
    if (!row) throw new NotFoundError('not_found', `No project with id '${id}' exists.`, { param: 'id' });
    return toProject(row);
  }

  // Keys

  async createKey(
    accountId: string,
    input: {
      name: string;
      projectId?: string | undefined;
      scopes: string[];
      expiresAt?: number | null | undefined;
    },
  ): Promise<KeyWithSecret> {
    if (input.expiresAt !== undefined && input.expiresAt !== null && input.expiresAt <= nowSeconds()) {
      throw new BadRequestError('validation_failed', 'expires_at must be in the future.', {
        param: 'expires_at',
      });
    }
    const projectId = input.projectId ?? (await this.defaultProject(accountId));
    await this.getProject(accountId, projectId).catch(() => {
      throw new NotFoundError('not_found', `No project with id '${projectId}' exists.`, {
        param: 'project_id',
      });
    });
    const secret = mintSecret();
    const row: KeyRow = {
      id: newId('key'),
      account_id: accountId,
      project_id: projectId,
      name: input.name,
      scopes: [...new Set(input.scopes)],
      preview: previewOf(secret),
      status: 'active',
      created: nowSeconds(),
      last_used_at: null,
      expires_at: input.expiresAt ?? null,
      revoked_at: null,
      rotated_at: null,
      previous_secret_expires_at: null,
    };
    await this.db.query(
      `insert into api_keys (id, account_id, project_id, name, scopes, secret_hash, preview, status, created, expires_at)
       values ($1, $2, $3, $4, $5, $6, $7, 'active', $8, $9)`,
      [
        row.id,
        accountId,
        projectId,
        row.name,
        row.scopes,
        hashSecret(secret),
        row.preview,
        row.created,
        row.expires_at,
      ],
    );
    return { ...toKey(row), secret };
  }

  async getKey(accountId: string, id: string): Promise<Key> {
    const [row] = await this.db.query<KeyRow>(
      `select ${KEY_COLUMNS} from api_keys where account_id = $1 and id = $2`,
      [accountId, id],
    );
    if (!row) throw new NotFoundError('not_found', `No key with id '${id}' exists.`, { param: 'id' });
    return toKey(row);
  }

  async listKeys(accountId: string, limit: number, cursor?: string, projectId?: string): Promise<Page<Key>> {
    const params: unknown[] = [accountId];
    let where = '';
    if (projectId) {
      params.push(projectId);
      where += ` and project_id = $${params.length}`;
    }
    const now = nowSeconds();
    return pageNewestFirst<KeyRow, Key>(
      this.db,
      `select ${KEY_COLUMNS} from api_keys where account_id = $1${where}`,
      params,
      { limit, cursor },
      (row) => toKey(row, now),
    );
  }

  async revokeKey(accountId: string, id: string): Promise<Key> {
    const [row] = await this.db.query<KeyRow>(
      `update api_keys set status = 'revoked', revoked_at = coalesce(revoked_at, $3),
         previous_secret_hash = null, previous_secret_expires_at = null
       where account_id = $1 and id = $2 returning ${KEY_COLUMNS}`,
      [accountId, id, nowSeconds()],
    );
    if (!row) throw new NotFoundError('not_found', `No key with id '${id}' exists.`, { param: 'id' });
    return toKey(row);
  }

  async rotateKey(accountId: string, id: string, gracePeriodSeconds: number): Promise<KeyWithSecret> {
    const secret = mintSecret();
    const now = nowSeconds();
    return this.db.transaction(async (tx) => {
      const [current] = await tx.query<KeyRow>(
        `select ${KEY_COLUMNS} from api_keys where account_id = $1 and id = $2 for update`,
        [accountId, id],
      );
      if (!current) throw new NotFoundError('not_found', `No key with id '${id}' exists.`, { param: 'id' });
      if (keyStatus(current, now) !== 'active') {
        throw new ConflictError(
          'key_not_active',
          `Key '${id}' is ${keyStatus(current, now)} and cannot be rotated.`,
          {
            param: 'id',
          },
        );
      }
      const [row] = await tx.query<KeyRow>(
        `update api_keys set
           previous_secret_hash = case when $4::bigint > 0 then secret_hash else null end,
           previous_secret_expires_at = case when $4::bigint > 0 then $5::bigint + $4::bigint else null end,
           secret_hash = $3, preview = $6, rotated_at = $5
         where id = $2 and account_id = $1 returning ${KEY_COLUMNS}`,
        [accountId, id, hashSecret(secret), gracePeriodSeconds, now, previewOf(secret)],
      );
      return { ...toKey(row as KeyRow, now), secret };
    });
  }
}
