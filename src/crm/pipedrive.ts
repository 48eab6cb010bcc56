// Pipedrive (API v2, v1 for notes; personal API token in `x-api-token`): Pipedrive has no batch
// writes and no upsert, so each member is searched by the organization field `Eurus listing ID`
// (exact match) and then updated, or created when none matched; a company this connection
// already recorded is updated by its id at once (and searched again if Pipedrive lost it). Its
// contact is a person searched by email the same way. Replies are notes on the organization.
// The check call lists the organization fields, and creates ours when it is missing.
import { z } from 'zod';
import { clip, CrmError, CrmHttp, documented } from './http.ts';
import {
  type ClientContext,
  type ContactOutcome,
  type CrmClient,
  escapeHtml,
  type MemberInput,
  type MemberOutcome,
  type NoteOutcome,
  noteText,
} from './providers.ts';

export const PIPEDRIVE_URL = 'https://api.pipedrive.com';
export const PIPEDRIVE_FIELD_NAME = 'Eurus listing ID';
/** Members recorded per batch (Pipedrive writes them one request at a time). */
const BATCH = 50;

interface PdBody {
  success?: boolean;
  error?: string;
  error_info?: string;
  data?: unknown;
  additional_data?: { next_cursor?: string | null };
}

// The answers' parts we read, as Pipedrive's API reference gives them (vendor-specs/pipedrive).
const ID = z.looseObject({ data: z.looseObject({ id: z.number() }) });
const SEARCH = z.looseObject({
  data: z
    .looseObject({ items: z.array(z.looseObject({ item: z.looseObject({ id: z.number() }) })).optional() })
    .nullable()
    .optional(),
});
const FIELDS = z.looseObject({
  data: z
    .array(z.looseObject({ field_name: z.string(), field_code: z.string() }))
    .nullable()
    .optional(),
  additional_data: z.looseObject({ next_cursor: z.string().nullable().optional() }).nullable().optional(),
});
const FIELD = z.looseObject({ data: z.looseObject({ field_code: z.string() }) });

function reason(body: unknown, text: string): string {
  const b = body as PdBody | null;
  const parts = [b?.error, b?.error_info].filter(Boolean);
  return clip(parts.length ? parts.join(' — ') : text || 'no reason given');
}

export function pipedriveClient(ctx: ClientContext): CrmClient {
  const http = new CrmHttp(ctx.outbound, {
    vendor: 'Pipedrive',
    baseUrl: ctx.baseUrl ?? PIPEDRIVE_URL,
    headers: { 'x-api-token': ctx.credentials.api_token ?? '' },
    reason,
    unauthorized: (status) => status === 401,
    ...ctx.http,
  });
  const fieldKey = () => {
    const key = ctx.settings.org_field_key;
    if (!key)
      throw new CrmError('crm_unavailable', 'The connection lacks its Pipedrive field; connect again.');
    return key;
  };

  async function search(
    kind: 'organizations' | 'persons',
    term: string,
    field: string,
  ): Promise<number | null> {
    const q = new URLSearchParams({ term, fields: field, exact_match: 'true', limit: '2' });
    const answer = await http.call('GET', `/api/v2/${kind}/search?${q.toString()}`);
    if (answer.status !== 200) {
      throw new CrmError(
        'crm_unavailable',
        `Pipedrive could not search ${kind} (${answer.status}): ${reason(answer.body, answer.text)}`,
        answer.status,
      );
    }
    const items = documented('Pipedrive', `a search of ${kind}`, SEARCH, answer).data?.items ?? [];
    return items[0]?.item.id ?? null;
  }

  /** Updates `id` when given (or found), else creates: the outcome, or the CRM's reason. */
  async function upsertOne(
    kind: 'organizations' | 'persons',
    knownId: string | undefined,
    find: () => Promise<number | null>,
    body: Record<string, unknown>,
  ): Promise<ContactOutcome> {
    let id: number | null = knownId ? Number(knownId) : await find();
    if (id !== null) {
      const patched = await http.call('PATCH', `/api/v2/${kind}/${id}`, body);
      if (patched.status === 200) return { result: 'updated', crmId: String(id), error: null };
      if (patched.status !== 404 || !knownId) {
        return { result: 'failed', crmId: null, error: reason(patched.body, patched.text) };
      }
      // deleted in Pipedrive since we recorded it: search again, else create
      id = await find();
      if (id !== null) {
        const again = await http.call('PATCH', `/api/v2/${kind}/${id}`, body);
        return again.status === 200
          ? { result: 'updated', crmId: String(id), error: null }
          : { result: 'failed', crmId: null, error: reason(again.body, again.text) };
      }
    }
    const made = await http.call('POST', `/api/v2/${kind}`, body);
    if (made.status === 200 || made.status === 201) {
      const newId = documented('Pipedrive', `a new one of its ${kind}`, ID, made).data.id;
      return { result: 'created', crmId: String(newId), error: null };
    }
    return { result: 'failed', crmId: null, error: reason(made.body, made.text) };
  }

  async function upsertMember(m: MemberInput): Promise<MemberOutcome> {
    const key = fieldKey();
    const org = await upsertOne(
      'organizations',
      m.known.company,
      () => search('organizations', m.listingId, 'custom_fields'),
      {
        name: m.name,
        ...(m.formattedAddress ? { address: { value: m.formattedAddress } } : {}),
        custom_fields: { [key]: m.listingId },
      },
    );
    if (org.result === 'failed') return { ...org, contact: null };
    const person = await upsertOne('persons', m.known.contact, () => search('persons', m.email, 'email'), {
      name: m.name,
      ...(org.crmId ? { org_id: Number(org.crmId) } : {}),
      emails: [{ value: m.email, primary: true, label: 'work' }],
      ...(m.phone ? { phones: [{ value: m.phone, primary: true, label: 'work' }] } : {}),
    });
    return { ...org, contact: person };
  }

  return {
    provider: 'pipedrive',
    batchSize: BATCH,
    objects: { company: 'organization', contact: 'person', note: 'note' },

    async check() {
      let cursor: string | null | undefined;
      // the organization fields, page by page (a few hundred at most)
      for (let page = 0; page < 20; page++) {
        const q = new URLSearchParams({ limit: '500', ...(cursor ? { cursor } : {}) });
        const answer = await http.call('GET', `/api/v2/organizationFields?${q.toString()}`);
        if (answer.status !== 200) {
          throw new CrmError(
            'crm_unavailable',
            `Pipedrive answered ${answer.status}: ${reason(answer.body, answer.text)}`,
            answer.status,
          );
        }
        const body = documented('Pipedrive', 'the list of organization fields', FIELDS, answer);
        const ours = (body.data ?? []).find((f) => f.field_name === PIPEDRIVE_FIELD_NAME);
        if (ours) return { org_field_key: ours.field_code };
        cursor = body.additional_data?.next_cursor;
        if (!cursor) break;
      }
      const made = await http.call('POST', '/api/v2/organizationFields', {
        field_name: PIPEDRIVE_FIELD_NAME,
        field_type: 'varchar',
      });
      const created = made.status === 200 || made.status === 201;
      const code = created
        ? documented('Pipedrive', 'the new organization field', FIELD, made).data.field_code
        : '';
      if (!created || !code) {
        throw new CrmError(
          made.status === 403 ? 'crm_unauthorized' : 'crm_unavailable',
          `Pipedrive refused to create the organization field "${PIPEDRIVE_FIELD_NAME}" (${made.status}): ${reason(made.body, made.text)}`,
          made.status,
        );
      }
      return { org_field_key: code };
    },

    async upsertMembers(members) {
      const out: MemberOutcome[] = [];
      for (const m of members) out.push(await upsertMember(m));
      return out;
    },

    async addNotes(notes) {
      const out: NoteOutcome[] = [];
      for (const n of notes) {
        const answer = await http.call('POST', '/v1/notes', {
          content: escapeHtml(noteText(n)).replace(/\n/g, '<br>'),
          org_id: Number(n.companyId),
          ...(n.contactId ? { person_id: Number(n.contactId) } : {}),
        });
        const created = answer.status === 200 || answer.status === 201;
        out.push(
          created
            ? {
                result: 'created',
                crmId: String(documented('Pipedrive', 'a new note', ID, answer).data.id),
                error: null,
              }
            : { result: 'failed', crmId: null, error: reason(answer.body, answer.text) },
        );
      }
      return out;
    },
  };
}
