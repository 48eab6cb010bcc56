// The MCP part of an account's data (src/platform/account-data.ts): registered remote servers,
// their header names only (the sealed headers are credentials).
import { type AccountDataPart, type AccountScope, rowsWithout } from '../platform/account-data.ts';
import type { Queryable } from '../platform/db.ts';

export const mcpData: AccountDataPart = {
  name: 'mcp',
  async export({ accountId }: AccountScope, q: Queryable) {
    return {
      servers: await rowsWithout(
        q,
        'select * from mcp_servers where account_id = $1 order by created, id',
        [accountId],
        ['headers'],
      ),
    };
  },
  async erase({ accountId }: AccountScope, q: Queryable) {
    await q.query('delete from mcp_servers where account_id = $1', [accountId]);
    return [];
  },
};
