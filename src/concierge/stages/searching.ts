// Searching: the agent searches the directory through the hub (`search_directory` on the server
// `eurus`); the hits are held against the brief (trade, country, distance, an address to write to,
// the suppression list) and the best of them shortlisted in the search's order.
import type { ConciergeShortlistEntry } from '../../../generated/directory/client/types.gen.ts';
import type { ResponseTool } from '../../../generated/model/client/types.gen.ts';
import { haversineKm } from '../../directory/geo.ts';
import { type ListingRecord, listingRecords } from '../../directory/store.ts';
import { suppressedAmong } from '../../sales/suppressions.ts';
import { AgentFailed } from '../agent.ts';
import type { StoredCandidate, WorkflowRow } from '../store.ts';
import { ENGLISH_NUMBERS, type Understanding } from '../understand.ts';
import { step } from '../view.ts';
import { INSTRUCTIONS, seedOf, type Stage, type StageRun } from './stage.ts';

/** Hits the agent's search asks for (the hub's most). */
const SEARCH_LIMIT = 20;

type Trade = NonNullable<Understanding['trade']>;
type Hit = { id: string; distance_km: number | null };
type Dropped = Record<'trade' | 'country' | 'distance' | 'email' | 'suppressed', number>;

export const search: Stage = async (row, run) => {
  const u = row.understanding;
  const trade = u?.trade;
  if (!u || !trade) {
    throw new AgentFailed(
      'trade_not_understood',
      'The brief names no trade the directory knows; say what kind of provider you need, or give `activity`.',
      400,
    );
  }
  const searched = await searchWithAgent(row, u, trade, run);
  const listings = await listingRecords(
    run.db,
    searched.hits.map((h) => h.id),
  );
  const suppressed = row.contact
    ? await suppressedAmong(
        run.db,
        row.account_id,
        listings.map((l) => (l.email ?? '').toLowerCase()),
      )
    : new Set<string>();
  const { kept, dropped } = fitting(row, u, trade, searched.hits, listings, suppressed);
  const steps = [
    step(
      'searching',
      'searched',
      `The agent searched the directory (${searched.args}): ${searched.hits.length} result(s), ${kept.length} fit the brief${leftOut(dropped, u)}.`,
      searched.responseId,
    ),
  ];
  if (kept.length === 0) {
    throw new AgentFailed(
      'no_providers_found',
      `No provider in the directory fits the brief. ${steps[0]!.message}`,
      400,
    );
  }
  const chosen = kept.slice(0, u.max_providers);
  const shortlist = chosen.map((c) => shortlisted(c, u, trade));
  steps.push(
    step(
      'searching',
      'shortlisted',
      `Shortlisted ${shortlist.length} of ${kept.length}, in the search's ranking (relevance and trust signals): ${shortlist
        .map((s) => s.name)
        .join(', ')}.`,
    ),
  );
  return {
    to: row.contact ? 'contacting' : 'comparing',
    steps,
    set: { candidates: chosen, shortlist },
    ...(row.contact ? { contacts: chosen } : {}),
  };
};

async function searchWithAgent(
  row: WorkflowRow,
  u: Understanding,
  trade: Trade,
  run: StageRun,
): Promise<{ hits: Hit[]; args: string; responseId: string }> {
  const where = row.hints.near ?? u.place?.name.split(',')[0] ?? null;
  // written so that any model, the built-in reference engine too, calls the search with these words
  const input = `Find ${ENGLISH_NUMBERS[SEARCH_LIMIT] ?? SEARCH_LIMIT} ${trade.term}${where ? ` near ${where}` : ''}`;
  const tool: ResponseTool = {
    type: 'mcp',
    server_label: 'eurus',
    allowed_tools: ['search_directory'],
    require_approval: 'never',
  };
  const agent = await run.agent({
    instructions: `${INSTRUCTIONS}\n\nThe brief: ${row.brief}`,
    input,
    tools: [tool],
    toolChoice: { type: 'mcp', server_label: 'eurus', name: 'search_directory' },
    seed: seedOf(row.id),
    metadata: { workflow_id: row.id, stage: 'searching' },
  });
  const call = agent.mcpCalls.find((c) => c.name === 'search_directory');
  if (!call || call.output === null) {
    throw new Error(`The agent's search failed: ${call?.error ?? 'it made no search'}`);
  }
  return {
    hits: (JSON.parse(call.output) as { results?: Hit[] }).results ?? [],
    args: Object.entries(call.arguments)
      .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
      .join(', '),
    responseId: agent.responseId,
  };
}

/**
 * The listing's own trade when it is the brief's: its primary activity (the first when none is
 * marked). A firm of another trade that lists this one beside its own (a locksmith that also
 * plumbs, a demolition firm with an installation sideline) is not shortlisted for it.
 */
export function tradeActivity(
  listing: Pick<ListingRecord, 'activities'>,
  activity: string,
): ListingRecord['activities'][number] | undefined {
  const own = listing.activities.find((a) => a.primary) ?? listing.activities[0];
  return own?.code.startsWith(activity) ? own : undefined;
}

/** The hits that fit the brief, in the search's order, and how many were left out for what. */
export function fitting(
  row: WorkflowRow,
  u: Understanding,
  trade: Trade,
  hits: Hit[],
  listings: ListingRecord[],
  suppressed: Set<string>,
): { kept: StoredCandidate[]; dropped: Dropped } {
  const byId = new Map(listings.map((l) => [l.id, l]));
  const kept: StoredCandidate[] = [];
  const dropped: Dropped = { trade: 0, country: 0, distance: 0, email: 0, suppressed: 0 };
  for (const hit of hits) {
    const listing = byId.get(hit.id);
    if (!listing) continue;
    const activity = tradeActivity(listing, trade.activity);
    if (!activity) {
      dropped.trade++;
      continue;
    }
    const distance = u.place ? haversineKm(u.place.lat, u.place.lon, listing.geo.lat, listing.geo.lon) : null;
    const why = misfit(row, u, listing, distance, suppressed);
    if (why !== null) {
      dropped[why]++;
      continue;
    }
    kept.push({
      listing_id: listing.id,
      name: listing.name,
      city: listing.address.city,
      distance_km: distance === null ? null : Math.round(distance * 10) / 10,
      rating: listing.rating,
      review_count: listing.review_count,
      claimed: listing.claimed,
      response_hours:
        listing.response_time_median_minutes === null
          ? null
          : Math.round(listing.response_time_median_minutes / 6) / 10,
      email: listing.email,
      activity: activity.code,
    });
  }
  return { kept, dropped };
}

/** Why a listing of the right trade does not fit the brief, else null. */
function misfit(
  row: WorkflowRow,
  u: Understanding,
  listing: ListingRecord,
  distance: number | null,
  suppressed: Set<string>,
): Exclude<keyof Dropped, 'trade'> | null {
  if (row.hints.country !== undefined && listing.address.country !== row.hints.country) return 'country';
  if (distance !== null && distance > u.radius_km) return 'distance';
  if (row.contact && !listing.email) return 'email';
  if (row.contact && suppressed.has((listing.email ?? '').toLowerCase())) return 'suppressed';
  return null;
}

function leftOut(dropped: Dropped, u: Understanding): string {
  const why: Record<keyof Dropped, string> = {
    trade: 'of another trade',
    country: 'in another country',
    distance: `beyond ${u.radius_km} km`,
    email: 'without an email address',
    suppressed: 'on your suppression list',
  };
  const parts = (Object.entries(dropped) as [keyof Dropped, number][])
    .filter(([, n]) => n > 0)
    .map(([reason, n]) => `${n} ${why[reason]}`);
  return parts.length > 0 ? ` (left out: ${parts.join(', ')})` : '';
}

function shortlisted(c: StoredCandidate, u: Understanding, trade: Trade): ConciergeShortlistEntry {
  return {
    listing_id: c.listing_id,
    name: c.name,
    city: c.city,
    distance_km: c.distance_km,
    rating: c.rating,
    review_count: c.review_count,
    claimed: c.claimed,
    reasons: [
      trade.name,
      ...(c.distance_km !== null
        ? [`${c.distance_km} km from ${u.place?.name.split(',')[0] ?? 'the place'}`]
        : []),
      c.rating !== null ? `Rated ${c.rating} from ${c.review_count} reviews` : 'No reviews yet',
      ...(c.claimed ? ['Claimed listing'] : []),
      ...(c.response_hours !== null && c.response_hours <= 24
        ? [`Usually answers within ${Math.ceil(c.response_hours)} hours`]
        : []),
    ].filter((r) => r !== ''),
  };
}
