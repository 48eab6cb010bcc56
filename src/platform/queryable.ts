// What runs SQL: the database, or one of its transactions (db.ts; embedded.ts for PGlite's worker).
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}
