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
  /** The account's custom limits (an enterprise contract the operator set), when it has any. */
  limits?: CustomLimits | undefined;
}

/**
 * Custom limits of an account, set by the operator: each figure given replaces its plan's
 * (src/limits/policies.ts); `directoryDailyQuota` null means no daily quota at all.
 */
export interface CustomLimits {
  modelRpm?: number | undefined;
  modelTpm?: number | undefined;
  imagesPerMinute?: number | undefined;
  audioSecondsPerMinute?: number | undefined;
  directoryRps?: number | undefined;
  directoryBurst?: number | undefined;
  directoryBurstSeconds?: number | undefined;
  directoryDailyQuota?: number | null | undefined;
}

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal;
  if (!principal) throw new Error('principalOf: no principal; is this operation secured in the spec?');
  return principal;
}
