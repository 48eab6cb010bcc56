// The operator: the account of BOOTSTRAP_ADMIN_KEY or of the admin key printed on the first
// start (accounts/store.ts isOperator). Operator-only operations (incidents of the status page,
// an account's custom limits) refuse any other account, whatever its scopes.
import { PermissionDeniedError } from './errors.ts';

/** Whether an account is the operator's (the accounts store answers). */
export type IsOperator = (accountId: string) => Promise<boolean>;

/** Throws 403 `operator_only` unless `accountId` is the operator's; `what` ends the message. */
export async function operatorOnly(isOperator: IsOperator, accountId: string, what: string): Promise<void> {
  if (!(await isOperator(accountId))) {
    throw new PermissionDeniedError(
      'operator_only',
      `Only the operator's account (that of BOOTSTRAP_ADMIN_KEY or the first start's admin key) may ${what}.`,
    );
  }
}
