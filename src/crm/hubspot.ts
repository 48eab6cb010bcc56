// HubSpot (CRM API, date version 2026-09, a private app's or service key's token): members are
// companies upserted in batches of 100 by the unique property `eurus_listing_id`
// (`POST /crm/objects/2026-09/companies/batch/upsert` with `idProperty`), their contacts upserted
// by email and associated with the company (default association), replies are notes created in
// batches of 100 and associated with the company (and the contact). The check call reads the
// property, and creates it when it is missing. The legacy v3/v4 paths end in 2027 (v4 in March).
// A batch names the inputs it refused in `errors[]` of its 200/201 (the 2026-09 documents) or of
// a 207 (HubSpot's error-handling guide, for writes that carry objectWriteTraceId): read alike.
import { z } from 'zod';
import { clip, CrmError, CrmHttp, documented } from './http.ts';
import {
  type ClientContext,
  type CrmClient,
  domainOf,
  escapeHtml,
  type MemberInput,
  type MemberOutcome,
  type NoteInput,
  type NoteOutcome,
  noteText,
} from './providers.ts';

export const HUBSPOT_URL = 'https://api.hubapi.com';
export const HUBSPOT_PROPERTY = 'eurus_listing_id';
/** HubSpot's date-based API version every path names. */
export const HUBSPOT_VERSION = '2026-09';
const OBJECTS = `/crm/objects/${HUBSPOT_VERSION}`;
const PROPERTIES = `/crm/properties/${HUBSPOT_VERSION}/companies`;
const BATCH = 100;
// HUBSPOT_DEFINED association types: note to company, note to contact
const NOTE_TO_COMPANY = 190;
const NOTE_TO_CONTACT = 202;

// The answers' parts we read, as HubSpot's API reference gives them (vendor-specs/hubspot).
const STANDARD_ERROR = z.looseObject({
  message: z.string().optional(),
  category: z.string().optional(),
  context: z.record(z.string(), z.array(z.string())).optional(),
  errors: z.array(z.looseObject({ message: z.string().optional() })).optional(),
});
const UPSERT = z.looseObject({
  results: z
    .array(
      z.looseObject({
        id: z.string(),
        new: z.boolean().optional(),
        properties: z.record(z.string(), z.string().nullable()).optional(),
      }),
    )
    .optional(),
  errors: z.array(STANDARD_ERROR).optional(),
});
/** The answer of batch/associate/default: HubSpot's BatchResponsePublicDefaultAssociation. */
const ASSOCIATE = z.looseObject({
  results: z
    .array(
      z.looseObject({
        from: z.looseObject({ id: z.string().optional() }).optional(),
        to: z.looseObject({ id: z.string().optional() }).optional(),
      }),
    )
    .optional(),
  errors: z.array(STANDARD_ERROR).optional(),
});
const PROPERTY = z.looseObject({
  name: z.string(),
  type: z.string(),
  hasUniqueValue: z.boolean().optional(),
});
type StandardError = z.infer<typeof STANDARD_ERROR>;
const NOTES = z.looseObject({
  results: z.array(z.looseObject({ id: z.string(), objectWriteTraceId: z.string().optional() })).optional(),
  errors: z.array(STANDARD_ERROR).optional(),
});

function reason(body: unknown, text: string): string {
  const b = body as StandardError | null;
  return clip(b?.message ?? (text || 'no reason given'));
}

/** The input ids an error of a batch answer is about (HubSpot names them in its context). */
function idsOf(error: StandardError): string[] {
  const c = error.context ?? {};
  return [...(c.objectWriteTraceId ?? []), ...(c.ids ?? []), ...(c.id ?? [])];
}

export function hubspotClient(ctx: ClientContext): CrmClient {
  const http = new CrmHttp(ctx.outbound, {
    vendor: 'HubSpot',
    baseUrl: ctx.baseUrl ?? HUBSPOT_URL,
    headers: { authorization: `Bearer ${ctx.credentials.access_token ?? ''}` },
    reason,
    unauthorized: (status) => status === 401,
    ...ctx.http,
  });

  const failAll = <T>(n: number, error: string, make: (e: string) => T): T[] =>
    Array.from({ length: n }, () => make(error));

  async function upsertContacts(members: MemberInput[], companies: MemberOutcome[]): Promise<void> {
    const byEmail = new Map<string, number[]>();
    members.forEach((m, i) => {
      if (companies[i]!.result === 'failed') return;
      const email = m.email.toLowerCase();
      byEmail.set(email, [...(byEmail.get(email) ?? []), i]);
    });
    if (byEmail.size === 0) return;
    const inputs = [...byEmail.keys()].map((email) => {
      const m = members[byEmail.get(email)![0]!]!;
      return {
        idProperty: 'email',
        id: email,
        objectWriteTraceId: email,
        properties: { email, company: m.name, ...(m.website ? { website: m.website } : {}) },
      };
    });
    const answer = await http.call('POST', `${OBJECTS}/contacts/batch/upsert`, { inputs });
    const set = (email: string, outcome: MemberOutcome['contact']) => {
      for (const i of byEmail.get(email) ?? []) companies[i]!.contact = outcome;
    };
    if (answer.status !== 200 && answer.status !== 207) {
      const why = reason(answer.body, answer.text);
      for (const email of byEmail.keys()) set(email, { result: 'failed', crmId: null, error: why });
      return;
    }
    const body = documented('HubSpot', 'a batch upsert', UPSERT, answer);
    for (const r of body.results ?? []) {
      const email = (r.properties?.email ?? '').toLowerCase();
      set(email, { result: r.new ? 'created' : 'updated', crmId: r.id, error: null });
    }
    for (const e of body.errors ?? []) {
      for (const email of idsOf(e))
        set(email.toLowerCase(), { result: 'failed', crmId: null, error: clip(e.message ?? 'refused') });
    }
    // associate each contact with its company (idempotent: associating twice changes nothing)
    const pairs = members.flatMap((_, i) => {
      const c = companies[i]!;
      return c.contact?.crmId && c.crmId ? [{ i, from: c.contact.crmId, to: c.crmId }] : [];
    });
    if (pairs.length > 0) {
      const assoc = await http.call(
        'POST',
        `/crm/associations/${HUBSPOT_VERSION}/contacts/companies/batch/associate/default`,
        {
          inputs: pairs.map((p) => ({ from: { id: p.from }, to: { id: p.to } })),
        },
      );
      // 200 and 207 alike may carry errors[]: a pair is associated only when a result names it
      const failed = (why: string) => `the contact was not associated with the company: ${clip(why)}`;
      if (assoc.status !== 200 && assoc.status !== 207) {
        const why = failed(reason(assoc.body, assoc.text));
        for (const p of pairs)
          companies[p.i]!.contact = { ...companies[p.i]!.contact!, result: 'failed', error: why };
      } else {
        const body = documented('HubSpot', 'a batch association', ASSOCIATE, assoc);
        const done = new Set((body.results ?? []).map((r) => `${r.from?.id}>${r.to?.id}`));
        const errors = body.errors ?? [];
        for (const p of pairs) {
          if (done.has(`${p.from}>${p.to}`)) continue;
          const named = errors.find((e) => idsOf(e).some((id) => id === p.from || id === p.to));
          const why =
            named?.message ?? errors[0]?.message ?? 'HubSpot returned no result for the association';
          companies[p.i]!.contact = { ...companies[p.i]!.contact!, result: 'failed', error: failed(why) };
        }
      }
    }
    for (const [email, indexes] of byEmail) {
      for (const i of indexes) {
        companies[i]!.contact ??= {
          result: 'failed',
          crmId: null,
          error: `HubSpot returned no result for the contact ${email}.`,
        };
      }
    }
  }

  return {
    provider: 'hubspot',
    batchSize: BATCH,
    objects: { company: 'company', contact: 'contact', note: 'note' },

    async check() {
      const found = await http.call('GET', `${PROPERTIES}/${HUBSPOT_PROPERTY}`);
      if (found.status === 200) {
        const property = documented('HubSpot', `the property ${HUBSPOT_PROPERTY}`, PROPERTY, found);
        // listing ids are text: a property of another type (number, phone_number...) refuses them
        if (typeof property?.type === 'string' && property.type !== 'string') {
          throw new CrmError(
            'crm_setup_required',
            `HubSpot's company property ${HUBSPOT_PROPERTY} exists with the type ${clip(property.type, 40)}, which cannot hold listing ids; delete it (it is made again as a unique text property), then connect again.`,
          );
        }
        if (property?.hasUniqueValue === false) {
          throw new CrmError(
            'crm_setup_required',
            `HubSpot's company property ${HUBSPOT_PROPERTY} exists but does not require unique values; delete it or make it unique, then connect again.`,
          );
        }
        return {};
      }
      if (found.status !== 404) {
        throw new CrmError(
          'crm_unavailable',
          `HubSpot answered ${found.status}: ${reason(found.body, found.text)}`,
          found.status,
        );
      }
      const made = await http.call('POST', PROPERTIES, {
        name: HUBSPOT_PROPERTY,
        label: 'Eurus listing ID',
        description: 'The id of the company in the Eurus directory; synced companies are upserted by it.',
        groupName: 'companyinformation',
        type: 'string',
        fieldType: 'text',
        hasUniqueValue: true,
      });
      // 409: made meanwhile by another check
      if (made.status !== 201 && made.status !== 200 && made.status !== 409) {
        throw new CrmError(
          made.status === 403 ? 'crm_unauthorized' : 'crm_unavailable',
          `HubSpot refused to create the company property ${HUBSPOT_PROPERTY} (${made.status}): ${reason(made.body, made.text)}`,
          made.status,
        );
      }
      return {};
    },

    async upsertMembers(members) {
      const inputs = members.map((m) => ({
        idProperty: HUBSPOT_PROPERTY,
        id: m.listingId,
        objectWriteTraceId: m.listingId,
        properties: {
          [HUBSPOT_PROPERTY]: m.listingId,
          name: m.name,
          ...(domainOf(m.website) ? { domain: domainOf(m.website)! } : {}),
          ...(m.website ? { website: m.website } : {}),
          ...(m.phone ? { phone: m.phone } : {}),
          ...(m.street ? { address: m.street } : {}),
          ...(m.postalCode ? { zip: m.postalCode } : {}),
          ...(m.city ? { city: m.city } : {}),
          ...(m.region ? { state: m.region } : {}),
          ...(m.country ? { country: m.country } : {}),
        },
      }));
      const answer = await http.call('POST', `${OBJECTS}/companies/batch/upsert`, { inputs });
      if (answer.status !== 200 && answer.status !== 207) {
        const why = reason(answer.body, answer.text);
        return failAll(members.length, why, (error) => ({
          result: 'failed',
          crmId: null,
          error,
          contact: null,
        }));
      }
      const body = documented('HubSpot', 'a batch upsert', UPSERT, answer);
      const outcome = new Map<string, MemberOutcome>();
      for (const r of body.results ?? []) {
        const id = r.properties?.[HUBSPOT_PROPERTY];
        if (id)
          outcome.set(id, { result: r.new ? 'created' : 'updated', crmId: r.id, error: null, contact: null });
      }
      for (const e of body.errors ?? []) {
        for (const id of idsOf(e)) {
          outcome.set(id, {
            result: 'failed',
            crmId: null,
            error: clip(e.message ?? 'refused'),
            contact: null,
          });
        }
      }
      const companies = members.map(
        (m) =>
          outcome.get(m.listingId) ?? {
            result: 'failed' as const,
            crmId: null,
            error: 'HubSpot returned no result for this company.',
            contact: null,
          },
      );
      await upsertContacts(members, companies);
      return companies;
    },

    async addNotes(notes: NoteInput[]): Promise<NoteOutcome[]> {
      const inputs = notes.map((n) => ({
        objectWriteTraceId: n.replyId,
        properties: {
          hs_timestamp: new Date(n.receivedAt * 1000).toISOString(),
          hs_note_body: escapeHtml(noteText(n)).replace(/\n/g, '<br>'),
        },
        associations: [
          {
            to: { id: n.companyId },
            types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: NOTE_TO_COMPANY }],
          },
          ...(n.contactId
            ? [
                {
                  to: { id: n.contactId },
                  types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: NOTE_TO_CONTACT }],
                },
              ]
            : []),
        ],
      }));
      const answer = await http.call('POST', `${OBJECTS}/notes/batch/create`, { inputs });
      if (answer.status !== 201 && answer.status !== 200 && answer.status !== 207) {
        const why = reason(answer.body, answer.text);
        return failAll(notes.length, why, (error) => ({ result: 'failed', crmId: null, error }));
      }
      const body = documented('HubSpot', 'a batch of new notes', NOTES, answer);
      const byTrace = new Map<string, NoteOutcome>();
      (body.results ?? []).forEach((r, i) => {
        const key = r.objectWriteTraceId ?? (body.errors?.length ? undefined : notes[i]?.replyId);
        if (key) byTrace.set(key, { result: 'created', crmId: r.id, error: null });
      });
      for (const e of body.errors ?? []) {
        for (const id of idsOf(e))
          byTrace.set(id, { result: 'failed', crmId: null, error: clip(e.message ?? 'refused') });
      }
      return notes.map(
        (n) =>
          byTrace.get(n.replyId) ?? {
            result: 'failed',
            crmId: null,
            error: 'HubSpot returned no result for this note.',
          },
      );
    },
  };
}
