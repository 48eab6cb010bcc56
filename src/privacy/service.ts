// Personal data of an account (issue 29, DESIGN.md "Third round"): exports (GDPR Art. 15 and 20)
// built by a durable job into one JSON archive behind a signed, expiring link; erasure (Art. 17)
// after a cancellable grace period, by a durable job that ends every key at once on every
// instance, has each feature erase its part and keeps a receipt of what was kept and why; and the
// daily retention sweep. The features' parts (their own account-data.ts) do the reading and
// erasing of their own tables; this module only composes them.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { keyIdsOf, projectIdsOf, revokeAllKeys } from '../accounts/account-data.ts';
import { endConsoleAccess } from '../console/account-data.ts';
import type {
  AccountDataPart,
  AccountScope,
  KeptRecord,
  RetentionCutoffs,
} from '../platform/account-data.ts';
import { nowSeconds } from '../platform/clock.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { ConflictError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { Jobs } from '../platform/jobs.ts';
import type { Logger } from '../platform/logger.ts';

export const EXPORT_JOB = 'account.export';
export const ERASE_JOB = 'account.erase';
export const RETENTION_JOB = 'retention.sweep';
/** An archive larger than this fails the export rather than the process. */
const MAX_ARCHIVE_BYTES = 512 * 1024 * 1024;

export interface ExportRow {
  id: string;
  account_id: string;
  status: 'pending' | 'completed' | 'failed';
  size_bytes: string | number | null;
  created: string | number;
  completed_at: string | number | null;
  expires_at: string | number | null;
}

export interface ErasureRow {
  id: string;
  account_id: string;
  status: 'scheduled' | 'cancelled' | 'completed';
  erase_at: string | number;
  job_id: string | null;
  receipt: Receipt | null;
  created: string | number;
  cancelled_at: string | number | null;
  completed_at: string | number | null;
}

export interface Receipt {
  erased: string[];
  kept: KeptRecord[];
}

export interface PrivacyOptions {
  db: Db;
  jobs: Jobs;
  parts: AccountDataPart[];
  /** Ends keys at once on every instance (the authenticator's cache and the revocation bus). */
  invalidateKey(keyId: string): Promise<void>;
  /** Mails the erasure's receipt to these addresses (the account's people, read before erasure). */
  mailReceipt(to: string[], receipt: Receipt): Promise<void>;
  graceMs: number;
  exportLinkTtlMs: number;
  retention: {
    storedResponsesMs: number;
    webhookMessagesMs: number;
    inboundMailMs: number;
    conciergeMailMs: number;
    requestLogsMs: number;
    usageDetailMs: number;
  };
  logger: Logger;
}

/** What erasure removes, in words, for the receipt. */
const ERASED = [
  'the console users (email addresses, password hashes), their sessions and link tokens',
  'every API key (revoked on every instance first), project names, idempotency replays',
  'webhook endpoints and their messages',
  'sending domains and their DKIM keys',
  'target lists and members, campaigns with recipients and messages, replies, the suppression list in clear',
  'concierge workflows, the providers contacted and their answers',
  'stored responses, registered MCP servers, CRM connections with syncs and links, generated images',
  'archives of earlier exports',
];

export class Privacy {
  readonly #o: PrivacyOptions;
  #signingKey: Promise<Buffer> | undefined;

  constructor(options: PrivacyOptions) {
    this.#o = options;
  }

  /** Declares the jobs and the daily retention schedule (in every process that runs workers). */
  async start(): Promise<void> {
    const { jobs } = this.#o;
    await jobs.define<{ exportId: string }>(EXPORT_JOB, (data) => this.#build(data.exportId), {
      retryLimit: 2,
    });
    await jobs.define<{ erasureId: string }>(ERASE_JOB, (data) => this.#erase(data.erasureId), {
      retryLimit: 10,
    });
    await jobs.define(RETENTION_JOB, async () => {
      const pruned = await this.sweep();
      this.#o.logger.info({ pruned }, 'retention sweep done');
    });
    await jobs.schedule(RETENTION_JOB, '41 2 * * *');
  }

  /** In `q`: on PGlite a query outside an open transaction waits for it forever. */
  async #scope(accountId: string, q: Queryable = this.#o.db): Promise<AccountScope> {
    return { accountId, projectIds: await projectIdsOf(q, accountId) };
  }

  // Exports

  async requestExport(accountId: string): Promise<ExportRow> {
    const { db, jobs } = this.#o;
    return db.transaction(async (tx) => {
      const [row] = await tx.query<ExportRow>(
        `insert into account_exports (id, account_id, status, created) values ($1, $2, 'pending', $3)
         returning id, account_id, status, size_bytes, created, completed_at, expires_at`,
        [newId('exp'), accountId, nowSeconds()],
      );
      await jobs.send(EXPORT_JOB, { exportId: row!.id }, { tx });
      return row!;
    });
  }

  async getExport(accountId: string, id: string): Promise<ExportRow> {
    const [row] = await this.#o.db.query<ExportRow>(
      `select id, account_id, status, size_bytes, created, completed_at, expires_at
       from account_exports where id = $1 and account_id = $2`,
      [id, accountId],
    );
    if (!row) throw new NotFoundError('not_found', `No export with id '${id}' exists.`, { param: 'id' });
    return row;
  }

  /** The archive of the export, for the holder of a valid signature. */
  async archive(id: string, expires: number, signature: string): Promise<string | undefined> {
    if (expires < nowSeconds()) return undefined;
    const expected = await this.#sign(id, expires);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const [row] = await this.#o.db.query<{ archive: string | null }>(
      `select archive from account_exports where id = $1 and status = 'completed' and expires_at >= $2`,
      [id, nowSeconds()],
    );
    return row?.archive ?? undefined;
  }

  /** The signed path of an export's archive, valid until its `expires_at`. */
  async archivePath(row: ExportRow): Promise<string | null> {
    if (row.status !== 'completed' || row.expires_at === null) return null;
    const expires = Number(row.expires_at);
    if (expires < nowSeconds()) return null;
    const signature = (await this.#sign(row.id, expires)).toString('base64url');
    return `/v1/account/exports/${row.id}/archive?expires=${expires}&signature=${signature}`;
  }

  #sign(id: string, expires: number): Promise<Buffer> {
    this.#signingKey ??= (async () => {
      const made = randomBytes(32).toString('hex');
      await this.#o.db.query(
        `insert into privacy_settings (name, value) values ('archive_signing_key', $1) on conflict (name) do nothing`,
        [made],
      );
      const [row] = await this.#o.db.query<{ value: string }>(
        `select value from privacy_settings where name = 'archive_signing_key'`,
      );
      return Buffer.from(row!.value, 'hex');
    })();
    return this.#signingKey.then((key) => createHmac('sha256', key).update(`${id}.${expires}`).digest());
  }

  async #build(exportId: string): Promise<void> {
    const { db, parts } = this.#o;
    const [row] = await db.query<{ account_id: string; status: string }>(
      'select account_id, status from account_exports where id = $1',
      [exportId],
    );
    if (!row || row.status !== 'pending') return;
    const scope = await this.#scope(row.account_id);
    const sections: Record<string, unknown> = {};
    for (const part of parts) sections[part.name] = await part.export(scope, db);
    const archive = JSON.stringify({
      object: 'account_archive',
      format: 'eurus.account-archive.v1',
      account_id: row.account_id,
      export_id: exportId,
      created: nowSeconds(),
      ...sections,
    });
    const size = Buffer.byteLength(archive);
    const now = nowSeconds();
    if (size > MAX_ARCHIVE_BYTES) {
      await db.query(`update account_exports set status = 'failed', completed_at = $2 where id = $1`, [
        exportId,
        now,
      ]);
      return;
    }
    await db.query(
      `update account_exports set status = 'completed', archive = $2, size_bytes = $3, completed_at = $4, expires_at = $5
       where id = $1 and status = 'pending'`,
      [exportId, archive, size, now, now + Math.ceil(this.#o.exportLinkTtlMs / 1000)],
    );
  }

  // Erasure

  async scheduleErasure(accountId: string): Promise<ErasureRow> {
    const { db, jobs, graceMs } = this.#o;
    const planned = await this.#plannedReceipt(accountId);
    return db.transaction(async (tx) => {
      const [open] = await tx.query<ErasureRow>(
        `select * from account_erasures where account_id = $1 and status = 'scheduled'`,
        [accountId],
      );
      if (open)
        throw new ConflictError(
          'erasure_scheduled',
          'This account is already to be erased; cancel it first to start again.',
        );
      const now = Date.now();
      const eraseAt = Math.ceil((now + graceMs) / 1000);
      const id = newId('era');
      const jobId = await jobs.send(
        ERASE_JOB,
        { erasureId: id },
        { tx, startAfter: new Date(eraseAt * 1000) },
      );
      const [row] = await tx.query<ErasureRow>(
        `insert into account_erasures (id, account_id, status, erase_at, job_id, receipt, created)
         values ($1, $2, 'scheduled', $3, $4, $5, $6) returning *`,
        [id, accountId, eraseAt, jobId, JSON.stringify(planned), Math.floor(now / 1000)],
      );
      return row!;
    });
  }

  async currentErasure(accountId: string): Promise<ErasureRow> {
    const [row] = await this.#o.db.query<ErasureRow>(
      'select * from account_erasures where account_id = $1 order by created desc, id desc limit 1',
      [accountId],
    );
    if (!row) throw new NotFoundError('erasure_not_found', 'No erasure was asked for this account.');
    return row;
  }

  async cancelErasure(accountId: string): Promise<ErasureRow> {
    const { db, jobs } = this.#o;
    const [row] = await db.query<ErasureRow>(
      `update account_erasures set status = 'cancelled', cancelled_at = $2
       where account_id = $1 and status = 'scheduled' returning *`,
      [accountId, nowSeconds()],
    );
    if (!row) throw new NotFoundError('erasure_not_found', 'No erasure of this account is waiting to run.');
    if (row.job_id) await jobs.cancel(ERASE_JOB, row.job_id).catch(() => undefined);
    return row;
  }

  /** What the receipt will say: every part's kept records, as if erased now (nothing is changed). */
  async #plannedReceipt(accountId: string): Promise<Receipt> {
    const kept = await this.#o.db
      .transaction(async (tx) => {
        const scope = await this.#scope(accountId, tx);
        const all: KeptRecord[] = [];
        for (const part of this.#o.parts) all.push(...(await part.erase(scope, tx)));
        throw new Planned(all);
      })
      .catch((err: unknown) => {
        if (err instanceof Planned) return err.kept;
        throw err;
      });
    return { erased: ERASED, kept };
  }

  async #erase(erasureId: string): Promise<void> {
    const { db, parts } = this.#o;
    const [row] = await db.query<ErasureRow>('select * from account_erasures where id = $1', [erasureId]);
    // cancelled (the job may have started as the cancel came), or done by an earlier attempt
    if (!row || row.status !== 'scheduled') return;
    const accountId = row.account_id;
    // Keys first, on every instance: nothing acts for the account from here on.
    await revokeAllKeys(db, accountId, nowSeconds());
    for (const keyId of await keyIdsOf(db, accountId)) await this.#o.invalidateKey(keyId);
    // held in memory only, to mail the receipt once everything is erased; a retried attempt
    // finds none and mails nothing
    const people = await endConsoleAccess(db, accountId);
    const scope = await this.#scope(accountId);
    const kept: KeptRecord[] = [];
    await db.transaction(async (tx) => {
      for (const part of parts) kept.push(...(await part.erase(scope, tx)));
      await tx.query('delete from account_exports where account_id = $1', [accountId]);
    });
    const receipt: Receipt = { erased: ERASED, kept };
    await db.query(
      `update account_erasures set status = 'completed', completed_at = $2, receipt = $3 where id = $1`,
      [erasureId, nowSeconds(), JSON.stringify(receipt)],
    );
    this.#o.logger.info({ account_id: accountId, erasure_id: erasureId }, 'account erased');
    if (people.length > 0) {
      await this.#o.mailReceipt(people, receipt).catch((err: unknown) => {
        this.#o.logger.warn({ err, erasure_id: erasureId }, 'the erasure receipt could not be mailed');
      });
    }
  }

  // Retention

  async sweep(): Promise<Record<string, number>> {
    const { db, parts, retention: r } = this.#o;
    const before = (ms: number) => Math.floor((Date.now() - ms) / 1000);
    const cutoffs: RetentionCutoffs = {
      storedResponses: before(r.storedResponsesMs),
      webhookMessages: before(r.webhookMessagesMs),
      inboundMail: before(r.inboundMailMs),
      conciergeMail: before(r.conciergeMailMs),
      requestLogs: before(r.requestLogsMs),
      usageDetail: before(r.usageDetailMs),
    };
    const pruned: Record<string, number> = {};
    for (const part of parts) {
      if (!part.prune) continue;
      Object.assign(pruned, await db.transaction((tx) => part.prune!(cutoffs, tx)));
    }
    const expired = await db.query(
      `update account_exports set archive = null where archive is not null and expires_at < $1 returning id`,
      [nowSeconds()],
    );
    pruned.export_archives = expired.length;
    return pruned;
  }
}

/** Thrown to roll back a dry run of erasure that only collects what would be kept. */
class Planned extends Error {
  readonly kept: KeptRecord[];
  constructor(kept: KeptRecord[]) {
    super('planned');
    this.kept = kept;
  }
}
