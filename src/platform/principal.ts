// Who is calling: set by the security handler (src/accounts/auth.ts) on every secured
// operation before request validation and before any router runs.
import type { Response } from 'express';
import type { Scope } from '../../generated/model/client/types.gen.ts';

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
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error('principalOf: no principal; is this operation secured in the spec?');
  return principal;
}
