// Who is calling: set by the security handler (src/accounts/auth.ts) on every secured
// operation before request validation and before any router runs.
import type { Response } from 'express';
import type { Scope } from '../../generated/model/client/types.gen.ts';
import type { ApiError } from './errors.ts';

// What the security handler leaves on `res.locals`, typed in Express's own `Locals` (merged):
// each module declares the locals it sets, and no reader casts.
declare global {
  namespace Express {
    interface Locals {
      /** The caller, on a secured operation. */
      principal?: Principal;
      /** The security handler's own error, kept for the error handler (the validator rebuilds it). */
      authError?: ApiError;
    }
  }
}

export interface Principal {
  accountId: string;
  projectId: string;
  keyId: string;
  /** The spec's Scope enum (spec/common). */
  scopes: readonly Scope[];
  /** The account's plan, which sets rate limits and prices (e.g. `standard`, `search_unlimited`). */
  plan: string;
}

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal;
  if (!principal) throw new Error('principalOf: no principal; is this operation secured in the spec?');
  return principal;
}
