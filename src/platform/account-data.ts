// What each feature stores about an account, as the feature itself tells it (issue 29): every
// folder that owns tables exports an AccountDataPart from its own `account-data.ts`, and
// src/privacy composes them into the export archive, the erasure and the retention sweep. No
// part reads another folder's tables: what it needs of them (the account's projects) is passed in.
import type { Queryable } from './db.ts';

/** The account a part acts on, and its projects (read by the accounts part before anything is erased). */
export interface AccountScope {
  accountId: string;
  projectIds: string[];
}

/** Something erasure keeps, and why (the receipt lists these). */
export interface KeptRecord {
  /** What is kept, in words: `usage records (counts and costs, no content)`. */
  what: string;
  /** The reason, with its legal ground. */
  why: string;
  /** How long it is kept, in words, or null for as long as the reason holds. */
  until: string | null;
}

/** Cut-offs of the retention sweep, in Unix seconds: rows older than these go. */
export interface RetentionCutoffs {
  storedResponses: number;
  webhookMessages: number;
  inboundMail: number;
  conciergeMail: number;
  requestLogs: number;
  usageDetail: number;
}

export interface AccountDataPart {
  /** The archive's section for this part: `webhooks`, `sales`. */
  name: string;
  /** Every row the part keeps about the account, secrets left out, by table-like name. */
  export(scope: AccountScope, q: Queryable): Promise<Record<string, unknown>>;
  /** Erases what the part keeps about the account; what it keeps anyway, and why. */
  erase(scope: AccountScope, q: Queryable): Promise<KeptRecord[]>;
  /** Drops what is older than its retention (the daily sweep); how many rows went, by what. */
  prune?(cutoffs: RetentionCutoffs, q: Queryable): Promise<Record<string, number>>;
}

/** Rows of a query with some columns left out (secrets, hashes, sealed values). */
export async function rowsWithout(
  q: Queryable,
  sql: string,
  params: unknown[],
  omit: string[],
): Promise<Array<Record<string, unknown>>> {
  const rows = await q.query<Record<string, unknown>>(sql, params);
  if (omit.length === 0) return rows;
  return rows.map((row) => Object.fromEntries(Object.entries(row).filter(([name]) => !omit.includes(name))));
}

/** Deletes with a query that returns one row per deleted row; how many went. */
export async function deleted(q: Queryable, sql: string, params: unknown[]): Promise<number> {
  return (await q.query(sql, params)).length;
}
