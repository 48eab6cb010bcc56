// Target lists: a search of the directory (GET /v1/search's own code, filters and ranking)
// walked page by page by a durable job until the list holds `max_members` listings that publish
// an email address; members are snapshots of their listings. Each page is written in one
// transaction with the list's counts, and an attempt that starts again (a worker killed, a
// retry) first removes what an earlier attempt added, so a list is built once whatever happens.
import type {
  CreateTargetListRequest,
  Listing,
  TargetList,
  TargetListFilters,
  TargetListMember,
  TargetListMemberStatus,
} from '../../generated/directory/client/types.gen.ts';
import { getPlaceDetails } from '../directory/places.ts';
import type { Search } from '../directory/search/search.ts';
import { nowSeconds } from '../platform/clock.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { ApiError, BadRequestError, ConflictError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { JobContext, Jobs } from '../platform/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import { numericCursor, type Page, pageOf } from '../platform/pagination.ts';

export const BUILD = 'sales.target-list.build';
/** Hits asked of the search per page while building (its most). */
const PAGE = 100;
const BUILD_RETRIES = 3;

export interface TargetListRow {
  id: string;
  account_id: string;
  project_id: string;
  name: string;
  filters: TargetListFilters;
  max_members: number;
  status: TargetList['status'];
  matched: number;
  added: number;
  skipped_no_email: number;
  member_count: number;
  failure_reason: string | null;
  metadata: Record<string, string>;
  created: number;
  built_at: number | null;
}

export interface MemberRow {
  id: string;
  target_list_id: string;
  listing_id: string;
  position: number;
  email: string;
  listing: Listing;
  status: TargetListMemberStatus;
  added: number;
  updated: number;
}

export function targetListOf(row: TargetListRow): TargetList {
  return {
    id: row.id,
    object: 'target_list',
    name: row.name,
    filters: row.filters,
    max_members: row.max_members,
    status: row.status,
    member_count: row.member_count,
    counts: { matched: row.matched, added: row.added, skipped_no_email: row.skipped_no_email },
    failure_reason: row.failure_reason,
    metadata: row.metadata,
    created: Number(row.created),
    built_at: row.built_at === null ? null : Number(row.built_at),
  };
}

export function memberOf(row: MemberRow): TargetListMember {
  const listing = row.listing;
  return {
    id: row.id,
    object: 'target_list_member',
    target_list_id: row.target_list_id,
    listing_id: row.listing_id,
    status: row.status,
    name: listing.name,
    email: row.email,
    website: listing.website,
    city: listing.address.city,
    country: listing.address.country,
    listing,
    added: Number(row.added),
    updated: Number(row.updated),
  };
}

export interface TargetListOptions {
  /** The directory's search (the one GET /v1/search runs). */
  search: Search;
  /** The origin of photo URLs in the listings' snapshots. */
  baseUrl: string;
  logger: Logger;
}

/** The search's own 400s name its query parameters; here they sit under `filters`. */
function asFilterError(err: unknown): unknown {
  if (err instanceof ApiError && err.status === 400) {
    return new BadRequestError(err.code, err.message, {
      param: err.param && err.param !== 'cursor' ? `filters.${err.param}` : 'filters',
    });
  }
  return err;
}

export class TargetLists {
  readonly #db: Db;
  readonly #jobs: Jobs;
  readonly #options: TargetListOptions;

  constructor(db: Db, jobs: Jobs, options: TargetListOptions) {
    this.#db = db;
    this.#jobs = jobs;
    this.#options = options;
  }

  /** Declares the build queue (and runs its workers where this instance has any). */
  async start(): Promise<void> {
    await this.#jobs.define<{ id: string }>(BUILD, (job, ctx) => this.#build(job.id, ctx), {
      concurrency: 2,
      retryLimit: BUILD_RETRIES,
      expireInSeconds: 1800,
    });
  }

  async create(
    principal: { accountId: string; projectId: string },
    input: CreateTargetListRequest,
  ): Promise<TargetList> {
    // The search's own checks, at once: a list that could never be built is a 400 now.
    await this.#options.search
      .search({ ...input.filters, limit: 1 }, new Date(), {
        baseUrl: this.#options.baseUrl,
      })
      .catch((err: unknown) => {
        throw asFilterError(err);
      });
    const id = newId('tl');
    return this.#db.transaction(async (tx) => {
      const [row] = await tx.query<TargetListRow>(
        `insert into target_lists (id, account_id, project_id, name, filters, max_members, metadata, created)
         values ($1, $2, $3, $4, $5, $6, $7, $8) returning *`,
        [
          id,
          principal.accountId,
          principal.projectId,
          input.name,
          JSON.stringify(input.filters),
          input.max_members ?? 1000,
          JSON.stringify(input.metadata ?? {}),
          nowSeconds(),
        ],
      );
      await this.#jobs.send(BUILD, { id }, { tx });
      return targetListOf(row!);
    });
  }

  async row(projectId: string, id: string, q: Queryable = this.#db, lock = false): Promise<TargetListRow> {
    const [row] = await q.query<TargetListRow>(
      `select * from target_lists where id = $1 and project_id = $2${lock ? ' for update' : ''}`,
      [id, projectId],
    );
    if (!row) throw new NotFoundError('target_list_not_found', `No target list ${id} in this project.`);
    return row;
  }

  async get(projectId: string, id: string): Promise<TargetList> {
    return targetListOf(await this.row(projectId, id));
  }

  async list(projectId: string, limit: number, cursor: string | undefined): Promise<Page<TargetList>> {
    const after = numericCursor(cursor);
    const rows = await this.#db.query<TargetListRow>(
      `select * from target_lists where project_id = $1
         and ($2::bigint is null or (created, id) < ($2::bigint, $3::text))
       order by created desc, id desc limit $4`,
      [projectId, after?.k ?? null, after?.id ?? '', limit + 1],
    );
    return pageOf(rows, limit, targetListOf, (r) => ({ k: Number(r.created), id: r.id }));
  }

  /** Deletes a list (and stops its build) unless a campaign that has not ended uses it. */
  async delete(projectId: string, id: string): Promise<void> {
    await this.#db.transaction(async (tx) => {
      await this.row(projectId, id, tx, true);
      const [busy] = await tx.query<{ id: string }>(
        `select id from campaigns where target_list_id = $1 and status in ('scheduled', 'sending', 'paused') limit 1`,
        [id],
      );
      if (busy) {
        throw new ConflictError(
          'target_list_in_use',
          `The campaign ${busy.id} uses this target list; cancel it before deleting the list.`,
        );
      }
      await tx.query('delete from target_lists where id = $1', [id]);
    });
  }

  async members(
    projectId: string,
    id: string,
    query: { limit: number; cursor: string | undefined; status: TargetListMemberStatus | undefined },
  ): Promise<Page<TargetListMember>> {
    await this.row(projectId, id);
    const after = numericCursor(query.cursor);
    const rows = await this.#db.query<MemberRow>(
      `select * from target_list_members where target_list_id = $1
         and ($2::text is null or status = $2)
         and ($3::integer is null or (position, id) > ($3::integer, $4::text))
       order by position, id limit $5`,
      [id, query.status ?? null, after?.k ?? null, after?.id ?? '', query.limit + 1],
    );
    return pageOf(rows, query.limit, memberOf, (r) => ({ k: r.position, id: r.id }));
  }

  /** Whether the target list `id` still exists (the CRM sync stops when it was deleted). */
  async exists(id: string): Promise<boolean> {
    const rows = await this.#db.query('select 1 from target_lists where id = $1', [id]);
    return rows.length > 0;
  }

  /** How many members the list `id` has (of one listing, when `listingId` is given). */
  async memberCount(id: string, listingId: string | null): Promise<number> {
    const [row] = await this.#db.query<{ n: number }>(
      `select count(*)::int as n from target_list_members where target_list_id = $1 and ($2::text is null or listing_id = $2)`,
      [id, listingId],
    );
    return row?.n ?? 0;
  }

  /** The list's members after `position`, in order (of one listing, when given): the CRM sync pushes them. */
  async membersAfter(
    id: string,
    position: number,
    listingId: string | null,
    limit: number,
  ): Promise<Array<{ listing_id: string; position: number; email: string; listing: Listing }>> {
    return this.#db.query(
      `select listing_id, position, email, listing from target_list_members
       where target_list_id = $1 and position > $2 and ($3::text is null or listing_id = $3)
       order by position limit $4`,
      [id, position, listingId, limit],
    );
  }

  async addMember(projectId: string, id: string, listingId: string): Promise<TargetListMember> {
    const listing = await getPlaceDetails(this.#db, listingId, new Date(), {
      baseUrl: this.#options.baseUrl,
    }).catch((err: unknown) => {
      if (err instanceof NotFoundError) {
        throw new NotFoundError('listing_not_found', `No listing has the id ${listingId}.`, {
          param: 'listing_id',
        });
      }
      throw err;
    });
    if (!listing.email) {
      throw new BadRequestError(
        'listing_without_email',
        `The listing ${listingId} publishes no email address, so no campaign could write to it.`,
        { param: 'listing_id' },
      );
    }
    const email = listing.email;
    return this.#db.transaction(async (tx) => {
      const list = await this.row(projectId, id, tx, true);
      if (list.status !== 'ready') {
        throw new ConflictError(
          'target_list_not_ready',
          `The target list is ${list.status}; members can be added to a ready list only.`,
        );
      }
      if (list.member_count >= list.max_members) {
        throw new ConflictError(
          'target_list_full',
          `The target list holds its max_members (${list.max_members}) already.`,
        );
      }
      const now = nowSeconds();
      const [row] = await tx.query<MemberRow>(
        `insert into target_list_members (id, target_list_id, listing_id, position, email, listing, added, updated)
         values ($1, $2, $3,
           (select coalesce(max(position), -1) + 1 from target_list_members where target_list_id = $2),
           $4, $5, $6, $6)
         on conflict (target_list_id, listing_id) do nothing returning *`,
        [newId('tlm'), id, listingId, email, JSON.stringify(listing), now],
      );
      if (!row) {
        throw new ConflictError(
          'already_member',
          `The listing ${listingId} is a member of this list already.`,
          { param: 'listing_id' },
        );
      }
      await tx.query('update target_lists set member_count = member_count + 1 where id = $1', [id]);
      return memberOf(row);
    });
  }

  async removeMember(projectId: string, id: string, listingId: string): Promise<string> {
    return this.#db.transaction(async (tx) => {
      const list = await this.row(projectId, id, tx, true);
      if (list.status === 'building') {
        throw new ConflictError(
          'target_list_not_ready',
          'The target list is building; members can be removed once it is ready.',
        );
      }
      const [row] = await tx.query<{ id: string }>(
        'delete from target_list_members where target_list_id = $1 and listing_id = $2 returning id',
        [id, listingId],
      );
      if (!row) {
        throw new NotFoundError(
          'member_not_found',
          `The listing ${listingId} is not a member of this list.`,
          { param: 'listing_id' },
        );
      }
      await tx.query('update target_lists set member_count = member_count - 1 where id = $1', [id]);
      return row.id;
    });
  }

  /** One attempt at building a list; an attempt that finds it no longer building does nothing. */
  async #build(id: string, ctx: JobContext): Promise<void> {
    const [list] = await this.#db.query<TargetListRow>('select * from target_lists where id = $1', [id]);
    if (!list || list.status !== 'building') return;
    try {
      await this.#fill(list, ctx.signal);
    } catch (err) {
      // A search that refuses the filters will refuse them again: the list failed. Anything
      // else is retried, and fails the list on the last attempt.
      const final = err instanceof ApiError || ctx.retryCount >= BUILD_RETRIES;
      if (!final) throw err;
      this.#options.logger.warn({ err, target_list_id: id }, 'target list build failed');
      await this.#db.query(
        `update target_lists set status = 'failed', failure_reason = $2, built_at = $3
         where id = $1 and status = 'building'`,
        [
          id,
          err instanceof ApiError ? err.message : 'The search behind the list failed; create the list again.',
          nowSeconds(),
        ],
      );
    }
  }

  async #fill(list: TargetListRow, signal: AbortSignal): Promise<void> {
    // An earlier attempt's members go: this one walks the search from the start.
    await this.#db.transaction(async (tx) => {
      await tx.query('delete from target_list_members where target_list_id = $1', [list.id]);
      await tx.query(
        `update target_lists set matched = 0, added = 0, skipped_no_email = 0, member_count = 0 where id = $1`,
        [list.id],
      );
    });
    // open_now is answered as of the list's creation, on every attempt alike
    const at = new Date(Number(list.created) * 1000);
    let cursor: string | undefined;
    let matched = 0;
    let added = 0;
    let skipped = 0;
    while (added < list.max_members) {
      if (signal.aborted) throw new Error('the build was stopped; it is retried');
      const page = await this.#options.search.search(
        { ...list.filters, limit: PAGE, ...(cursor !== undefined ? { cursor } : {}) },
        at,
        { baseUrl: this.#options.baseUrl },
      );
      const rows: unknown[][] = [];
      const now = nowSeconds();
      for (const hit of page.data) {
        if (added >= list.max_members) break;
        matched++;
        const email = hit.listing.email;
        if (!email) {
          skipped++;
          continue;
        }
        rows.push([newId('tlm'), list.id, hit.listing.id, added, email, JSON.stringify(hit.listing), now]);
        added++;
      }
      const more = await this.#db.transaction(async (tx) => {
        const [still] = await tx.query<{ id: string }>(
          `update target_lists set matched = $2, added = $3, skipped_no_email = $4, member_count = $3
           where id = $1 and status = 'building' returning id`,
          [list.id, matched, added, skipped],
        );
        if (!still) return false; // deleted meanwhile
        if (rows.length > 0) {
          const values = rows.map(
            (_, r) =>
              `($${r * 7 + 1}, $${r * 7 + 2}, $${r * 7 + 3}, $${r * 7 + 4}, $${r * 7 + 5}, $${r * 7 + 6}, $${r * 7 + 7}, $${r * 7 + 7})`,
          );
          await tx.query(
            `insert into target_list_members (id, target_list_id, listing_id, position, email, listing, added, updated)
             values ${values.join(', ')} on conflict (target_list_id, listing_id) do nothing`,
            rows.flat(),
          );
        }
        return true;
      });
      if (!more) return;
      if (!page.has_more || page.next_cursor === null) break;
      cursor = page.next_cursor;
    }
    await this.#db.query(
      `update target_lists set status = 'ready', built_at = $2,
         member_count = (select count(*) from target_list_members where target_list_id = $1)
       where id = $1 and status = 'building'`,
      [list.id, nowSeconds()],
    );
  }
}
