// The media part of an account's data (src/platform/account-data.ts): generated images kept for
// their signed URLs (an hour), listed without their bytes.
import { type AccountDataPart, type AccountScope, rowsWithout } from '../platform/account-data.ts';
import type { Queryable } from '../platform/db.ts';

export const mediaData: AccountDataPart = {
  name: 'media',
  async export({ accountId }: AccountScope, q: Queryable) {
    return {
      image_files: await rowsWithout(
        q,
        'select * from media_files where account_id = $1 order by created, id',
        [accountId],
        ['bytes'],
      ),
    };
  },
  async erase({ accountId }: AccountScope, q: Queryable) {
    await q.query('delete from media_files where account_id = $1', [accountId]);
    return [];
  },
};
