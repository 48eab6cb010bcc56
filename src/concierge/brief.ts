// A brief coming in, in the order a client meets its errors: the request checked on its own
// (`checkBrief`), then against the account (plan, webhook endpoint, sending domain), then its
// place resolved, then priced by rule (`termsOf`). Each phase hands the next a typed value.
import type {
  CreateConciergeBriefRequest,
  WorkflowComplexity,
  WorkflowStep,
} from '../../generated/directory/client/types.gen.ts';
import { hasActivePlan, PLANS } from '../console/plans.ts';
import { geocode, reverseGeocode } from '../directory/places.ts';
import type { Db } from '../platform/db.ts';
import { ApiError, BadRequestError, PermissionDeniedError } from '../platform/errors.ts';
import { NANO_PER_EUR, priceText } from '../platform/metering.ts';
import type { Hints } from './store.ts';
import { countIn, DEFAULT_MAX_PROVIDERS, type ResolvedPlace, tradeOf } from './understand.ts';
import { step } from './view.ts';

const MAX_RESPOND_DAYS = 30;
const DEFAULT_RESPOND_HOURS = 48;

/** Prices by complexity (docs/concierge.md), billed only on success. */
export const PRICES_NANO: Record<WorkflowComplexity, number> = {
  simple: NANO_PER_EUR / 2,
  standard: 2 * NANO_PER_EUR,
  complex: 5 * NANO_PER_EUR,
};

/** The complexity of a brief by rule (docs/concierge.md): no contact simple, up to 5 contacted standard, more complex. */
export function complexityOf(contact: boolean, providers: number): WorkflowComplexity {
  if (!contact) return 'simple';
  return providers <= 5 ? 'standard' : 'complex';
}

/**
 * What a succeeded workflow is billed, by the work done (docs/concierge.md): fewer than two quotes
 * that can be compared on their totals is a comparison on the directory's data, `simple`; else
 * the providers actually contacted set it (`standard` up to 5, `complex` more). Never more than
 * the price set when the brief was accepted.
 */
export function billingOf(
  accepted: WorkflowComplexity,
  result: { contacted: number | null; providers: { quote: { comparable: boolean } | null }[] },
): { complexity: WorkflowComplexity; priceNano: number; reason: string } {
  if (result.contacted === null)
    return { complexity: accepted, priceNano: PRICES_NANO[accepted], reason: 'no provider contacted' };
  const quotes = result.providers.filter((p) => p.quote?.comparable).length;
  const done: WorkflowComplexity = quotes < 2 ? 'simple' : complexityOf(true, result.contacted);
  const complexity = PRICES_NANO[done] <= PRICES_NANO[accepted] ? done : accepted;
  const reason =
    quotes < 2
      ? `${quotes === 0 ? 'no quote' : 'one quote'} to compare, so a comparison on the directory's data`
      : `${quotes} quotes compared from ${result.contacted} providers contacted`;
  return { complexity, priceNano: PRICES_NANO[complexity], reason };
}

/** A request that passed the checks that need nothing but itself. */
export interface CheckedBrief {
  input: CreateConciergeBriefRequest;
  /** The brief without surrounding spaces. */
  text: string;
  contact: boolean;
  respondBy: number | null;
  hints: Hints;
}

export function checkBrief(input: CreateConciergeBriefRequest, now: number): CheckedBrief {
  const text = input.brief.trim();
  if (text.length < 10) {
    throw new BadRequestError(
      'brief_too_short',
      'The brief needs at least 10 characters besides spaces: say what you need, where and by when.',
      { param: 'brief' },
    );
  }
  if (input.location !== undefined && input.near !== undefined) {
    throw new BadRequestError('location_and_near', 'Give `location` or `near`, not both.', { param: 'near' });
  }
  if (input.radius_km !== undefined && input.location === undefined && input.near === undefined) {
    throw new BadRequestError('radius_without_place', '`radius_km` needs `location` or `near`.', {
      param: 'radius_km',
    });
  }
  const contact = input.contact ?? input.sending_domain_id !== undefined;
  if (contact && input.sending_domain_id === undefined) {
    throw new BadRequestError(
      'sending_domain_required',
      'Contacting providers needs `sending_domain_id`, a verified sending domain to write from.',
      { param: 'sending_domain_id' },
    );
  }
  return {
    input,
    text,
    contact,
    respondBy: respondByOf(input.respond_by, contact, now),
    hints: hintsOf(input),
  };
}

function respondByOf(respondBy: string | undefined, contact: boolean, now: number): number | null {
  if (respondBy === undefined) return contact ? now + DEFAULT_RESPOND_HOURS * 3600 : null;
  if (!contact) {
    throw new BadRequestError(
      'respond_by_without_contact',
      '`respond_by` is for briefs that contact providers (`contact: true`).',
      { param: 'respond_by' },
    );
  }
  const at = Date.parse(respondBy);
  if (!Number.isFinite(at)) {
    throw new BadRequestError('validation_failed', '`respond_by` must be an RFC 3339 date-time.', {
      param: 'respond_by',
    });
  }
  const seconds = Math.floor(at / 1000);
  if (seconds <= now) {
    throw new BadRequestError('respond_by_in_past', `\`respond_by\` (${respondBy}) is not in the future.`, {
      param: 'respond_by',
    });
  }
  if (seconds > now + MAX_RESPOND_DAYS * 86_400) {
    throw new BadRequestError(
      'respond_by_too_far',
      `\`respond_by\` may be at most ${MAX_RESPOND_DAYS} days ahead.`,
      { param: 'respond_by' },
    );
  }
  return seconds;
}

function hintsOf(input: CreateConciergeBriefRequest): Hints {
  return {
    ...(input.location !== undefined ? { location: input.location } : {}),
    ...(input.near !== undefined ? { near: input.near } : {}),
    ...(input.radius_km !== undefined ? { radius_km: input.radius_km } : {}),
    ...(input.country !== undefined ? { country: input.country } : {}),
    ...(input.activity !== undefined ? { activity: input.activity } : {}),
    ...(input.max_providers !== undefined ? { max_providers: input.max_providers } : {}),
    ...(input.deadline !== undefined ? { deadline: input.deadline } : {}),
  };
}

/** Briefs need the account's Concierge plan. */
export async function assertSubscribed(db: Db, accountId: string): Promise<void> {
  if (await hasActivePlan(db, accountId, 'concierge')) return;
  throw new PermissionDeniedError(
    'subscription_required',
    `Briefs need the account's Concierge plan (${priceText(PLANS.concierge.monthlyNano, 0)} a month): subscribe with POST /v1/subscriptions {"plan": "concierge"} on the Model API.`,
  );
}

/** The same error as the owner's, answered for this request's field. */
export function asParam<T>(param: string): (err: unknown) => T {
  return (err) => {
    if (err instanceof ApiError) throw new ApiError(err.status, err.code, err.message, { param });
    throw err;
  };
}

/** The `location` or `near` hint as the directory's geocoder resolves it, else null. */
export async function resolvePlace(db: Db, hints: Hints, baseUrl: string): Promise<ResolvedPlace | null> {
  if (hints.location !== undefined) {
    const found = await geocode(db, hints.location, { country: hints.country, limit: 1 });
    const best = found.data[0];
    if (!best) {
      throw new BadRequestError(
        'location_not_found',
        `No place called '${hints.location}' was found${hints.country ? ` in ${hints.country}` : ''}.`,
        { param: 'location' },
      );
    }
    return { name: best.formatted, lat: best.lat, lon: best.lon, country: best.country };
  }
  if (hints.near !== undefined) {
    const [lat, lon] = hints.near.split(',').map(Number) as [number, number];
    const at = await reverseGeocode(db, lat, lon, { limit: 1, now: new Date(), baseUrl });
    const place = at.place as { name?: string; country?: string } | null;
    return {
      name: place?.name ? `near ${place.name}` : hints.near,
      lat,
      lon,
      country: place?.country ?? hints.country ?? '',
    };
  }
  return null;
}

/** What a brief costs and why, by rule: the providers to contact as planning will read them. */
export function termsOf(brief: CheckedBrief): {
  complexity: WorkflowComplexity;
  priceNano: number;
  accepted: WorkflowStep;
} {
  const providers =
    brief.input.max_providers ??
    countIn(brief.text, tradeOf(brief.text, brief.input.activity)?.activity) ??
    DEFAULT_MAX_PROVIDERS;
  const complexity = complexityOf(brief.contact, providers);
  const prices = (['simple', 'standard', 'complex'] as const)
    .map((c) => `${priceText(PRICES_NANO[c])} ${c}`)
    .join(', ');
  const accepted = step(
    null,
    'accepted',
    `Accepted as ${complexity} (${prices}, billed only on success): ${
      brief.contact
        ? `up to ${providers} providers to contact`
        : "a comparison on the directory's data, no provider contacted"
    }.`,
  );
  return { complexity, priceNano: PRICES_NANO[complexity], accepted };
}
