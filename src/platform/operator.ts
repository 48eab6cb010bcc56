// The operator: the account of BOOTSTRAP_ADMIN_KEY or of the admin key printed on the first
// start (named `bootstrap` in accounts). Operator-only operations (incidents of the status page,
// an account's custom limits) refuse any other account, whatever its scopes.
import type { Queryable } from './db.ts';
import { PermissionDeniedError } from './errors.ts';

/** Throws 403 `operator_only` unless `accountId` is the operator's; `what` ends the message. */
export async function operatorOnly(db: Queryable, accountId: string, what: string): Promise<void> {
  const [row] = await db.query<{ name: string }>('select name from accounts where id = $1', [accountId]);
  if (row?.name !== 'bootstrap') {
    throw new PermissionDeniedError(
      'operator_only',
      `Only the operator's account (that of BOOTSTRAP_ADMIN_KEY or the first start's admin key) may ${what}.`,
    );
  }
}
