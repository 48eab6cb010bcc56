// /v1/account: the export and the erasure of the caller's account (tag Account of the model
// spec), with an `admin` key or the console's session. Erasure re-authenticates: the account's
// id typed again, and the console password when the account has a console user.
import type { AccountErasure, AccountExport } from '../../generated/model/client/types.gen.ts';
import { consolePasswordsOf } from '../console/account-data.ts';
import { verifyPassword } from '../console/passwords.ts';
import type { Queryable } from '../platform/db.ts';
import { AuthenticationError, BadRequestError, NotFoundError } from '../platform/errors.ts';
import { SENT, operationRouter, type OperationRouter } from '../platform/route.ts';
import type { ErasureRow, ExportRow, Privacy } from './service.ts';

const num = (v: string | number | null) => (v === null ? null : Number(v));

function erasureOf(row: ErasureRow): AccountErasure {
  return {
    id: row.id,
    object: 'account_erasure',
    status: row.status,
    erase_at: Number(row.erase_at),
    receipt: row.receipt ?? { erased: [], kept: [] },
    created: Number(row.created),
    cancelled_at: num(row.cancelled_at),
    completed_at: num(row.completed_at),
  };
}

export interface PrivacyRoutesOptions {
  privacy: Privacy;
  db: Queryable;
  /** The model API's origin as clients reach it (download links). */
  publicUrl: () => string;
}

export function createPrivacyRouter({ privacy, db, publicUrl }: PrivacyRoutesOptions) {
  const api: OperationRouter = operationRouter();

  async function exportOf(row: ExportRow): Promise<AccountExport> {
    const path = await privacy.archivePath(row);
    return {
      id: row.id,
      object: 'account_export',
      status: row.status,
      size_bytes: num(row.size_bytes),
      download_url: path === null ? null : `${publicUrl()}${path}`,
      created: Number(row.created),
      completed_at: num(row.completed_at),
      expires_at: num(row.expires_at),
    };
  }

  api.on('createAccountExport', async ({ principal }) => ({
    status: 202,
    body: await exportOf(await privacy.requestExport(principal().accountId)),
  }));

  api.on('getAccountExport', async ({ path, principal }) => ({
    status: 200,
    headers: { 'Cache-Control': 'no-store' },
    body: await exportOf(await privacy.getExport(principal().accountId, path.id)),
  }));

  api.on('getAccountExportArchive', async ({ path, query, res }): Promise<typeof SENT> => {
    const archive = await privacy.archive(path.id, Number(query.expires), String(query.signature));
    if (archive === undefined) {
      throw new NotFoundError('archive_not_found', 'This download link is unknown, expired or not valid.');
    }
    // sent as stored: the archive is large and built by us, not re-validated per request
    res
      .status(200)
      .set({
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Disposition': `attachment; filename="eurus-account-${path.id}.json"`,
        'Cache-Control': 'no-store',
      })
      .end(archive);
    return SENT;
  });

  api.on('deleteAccount', async ({ body, res, principal }) => {
    const accountId = principal().accountId;
    if (body.confirm !== accountId) {
      throw new BadRequestError('confirmation_mismatch', 'confirm must be the id of the account to erase.', {
        param: 'confirm',
      });
    }
    const people = await consolePasswordsOf(db, accountId);
    if (people.length > 0) {
      // with a session, the password of its own user; with a key, that of any user of the account
      const session = res.locals.consoleSession;
      const candidates = session ? people.filter((p) => p.email === session.row.email) : people;
      let ok = false;
      for (const person of candidates) {
        if (body.password !== undefined && (await verifyPassword(body.password, person.password_hash)))
          ok = true;
      }
      if (!ok) {
        throw new AuthenticationError(
          'invalid_credentials',
          'Erasing the account needs the console password of the account, in `password`.',
        );
      }
    }
    return { status: 202, body: erasureOf(await privacy.scheduleErasure(accountId)) };
  });

  api.on('getAccountErasure', async ({ principal }) => ({
    status: 200,
    body: erasureOf(await privacy.currentErasure(principal().accountId)),
  }));

  api.on('cancelAccountErasure', async ({ principal }) => ({
    status: 200,
    body: erasureOf(await privacy.cancelErasure(principal().accountId)),
  }));

  return api;
}
