// Salesforce (REST API v62.0, OAuth access token, the org's My Domain URL): members are accounts
// upserted in collections of 200 by the external-id field `Eurus_Listing_Id__c`
// (`PATCH /composite/sobjects/Account/Eurus_Listing_Id__c`, allOrNone false: each record
// succeeds or fails alone), contacts the same way (the contact's own `Eurus_Listing_Id__c` is the
// listing id, its account found by the account's external id), replies are completed tasks
// created in collections of 200. The check call describes Account and Contact, so credentials
// and the external-id fields are checked at once.
import { z } from 'zod';
import { clip, CrmError, CrmHttp, documented } from './http.ts';
import type { ClientContext, CrmClient, MemberOutcome, NoteOutcome } from './providers.ts';
import { noteText } from './providers.ts';

export const SALESFORCE_VERSION = 'v62.0';
export const SALESFORCE_FIELD = 'Eurus_Listing_Id__c';
const BATCH = 200;
const DATA = `/services/data/${SALESFORCE_VERSION}`;

// The answers' parts we read, as Salesforce's REST API reference gives them (vendor-specs/salesforce).
const SF_ERROR = z.looseObject({
  message: z.string().optional(),
  errorCode: z.string().optional(),
  statusCode: z.string().optional(),
});
type SfError = z.infer<typeof SF_ERROR>;
const SAVE_RESULTS = z.array(
  z.looseObject({
    id: z.string().nullable().optional(),
    success: z.boolean(),
    created: z.boolean().optional(),
    errors: z.array(SF_ERROR).optional(),
  }),
);
type SaveResult = z.infer<typeof SAVE_RESULTS>[number];
const DESCRIBE = z.looseObject({
  fields: z.array(z.looseObject({ name: z.string(), externalId: z.boolean().optional() })),
});

function reasonOf(errors: SfError[] | undefined): string {
  const list = (errors ?? []).map((e) =>
    `${e.errorCode ?? e.statusCode ?? 'ERROR'}: ${e.message ?? ''}`.trim(),
  );
  return clip(list.join('; ') || 'no reason given');
}

function reason(body: unknown, text: string): string {
  return Array.isArray(body) ? reasonOf(body as SfError[]) : clip(text || 'no reason given');
}

const cut = (text: string | null, max: number) => (text === null ? null : text.slice(0, max));

export function salesforceClient(ctx: ClientContext): CrmClient {
  const base = ctx.baseUrl ?? ctx.credentials.instance_url ?? '';
  const http = new CrmHttp(ctx.outbound, {
    vendor: 'Salesforce',
    baseUrl: base,
    headers: { authorization: `Bearer ${ctx.credentials.access_token ?? ''}` },
    reason,
    unauthorized: (status) => status === 401,
    ...ctx.http,
  });

  /** A 403 REQUEST_LIMIT_EXCEEDED is the org's daily API allowance: waiting minutes cannot cure it. */
  function refuse(status: number, body: unknown, text: string): never {
    const limit =
      Array.isArray(body) && (body as SfError[]).some((e) => e.errorCode === 'REQUEST_LIMIT_EXCEEDED');
    throw new CrmError(
      limit ? 'crm_rate_limited' : 'crm_unavailable',
      `Salesforce answered ${status}: ${reason(body, text)}`,
      status,
    );
  }

  async function upsert(
    object: 'Account' | 'Contact',
    records: Record<string, unknown>[],
  ): Promise<SaveResult[]> {
    const answer = await http.call('PATCH', `${DATA}/composite/sobjects/${object}/${SALESFORCE_FIELD}`, {
      allOrNone: false,
      records: records.map((r) => ({ attributes: { type: object }, ...r })),
    });
    if (answer.status !== 200) {
      // the whole call was refused (a missing field, say): every record fails with the reason
      if (answer.status === 403) refuse(answer.status, answer.body, answer.text);
      const why = reason(answer.body, answer.text);
      return records.map(() => ({ success: false, errors: [{ message: why }] }));
    }
    return documented('Salesforce', `the upsert of ${object} records`, SAVE_RESULTS, answer);
  }

  return {
    provider: 'salesforce',
    batchSize: BATCH,
    objects: { company: 'account', contact: 'contact', note: 'task' },

    async check() {
      for (const object of ['Account', 'Contact']) {
        const answer = await http.call('GET', `${DATA}/sobjects/${object}/describe`);
        if (answer.status !== 200) refuse(answer.status, answer.body, answer.text);
        const fields = documented('Salesforce', `the description of ${object}`, DESCRIBE, answer).fields;
        const field = fields.find((f) => f.name === SALESFORCE_FIELD);
        if (!field?.externalId) {
          throw new CrmError(
            'crm_setup_required',
            `Salesforce's ${object} has no external-id field ${SALESFORCE_FIELD}; create it as a text field marked "External ID" and "Unique" (see the CRM guide), then connect again.`,
          );
        }
      }
      return {};
    },

    async upsertMembers(members) {
      const accounts = await upsert(
        'Account',
        members.map((m) => ({
          [SALESFORCE_FIELD]: m.listingId,
          Name: cut(m.name, 255),
          ...(m.website ? { Website: cut(m.website, 255) } : {}),
          ...(m.phone ? { Phone: cut(m.phone, 40) } : {}),
          ...(m.street ? { BillingStreet: m.street } : {}),
          ...(m.postalCode ? { BillingPostalCode: cut(m.postalCode, 20) } : {}),
          ...(m.city ? { BillingCity: cut(m.city, 40) } : {}),
          ...(m.region ? { BillingState: cut(m.region, 80) } : {}),
          ...(m.country ? { BillingCountry: m.country } : {}),
        })),
      );
      const outcomes: MemberOutcome[] = members.map((_, i) => {
        const r = accounts[i];
        if (!r)
          return {
            result: 'failed',
            crmId: null,
            error: 'Salesforce returned no result for this account.',
            contact: null,
          };
        return r.success
          ? { result: r.created ? 'created' : 'updated', crmId: r.id ?? null, error: null, contact: null }
          : { result: 'failed', crmId: null, error: reasonOf(r.errors), contact: null };
      });
      const withAccount = members.flatMap((m, i) => (outcomes[i]!.result === 'failed' ? [] : [{ m, i }]));
      if (withAccount.length > 0) {
        const contacts = await upsert(
          'Contact',
          withAccount.map(({ m }) => ({
            [SALESFORCE_FIELD]: m.listingId,
            LastName: cut(m.name, 80),
            Email: m.email,
            Account: { [SALESFORCE_FIELD]: m.listingId },
          })),
        );
        withAccount.forEach(({ i }, k) => {
          const r = contacts[k];
          outcomes[i]!.contact = !r
            ? { result: 'failed', crmId: null, error: 'Salesforce returned no result for this contact.' }
            : r.success
              ? { result: r.created ? 'created' : 'updated', crmId: r.id ?? null, error: null }
              : { result: 'failed', crmId: null, error: reasonOf(r.errors) };
        });
      }
      return outcomes;
    },

    async addNotes(notes) {
      const answer = await http.call('POST', `${DATA}/composite/sobjects`, {
        allOrNone: false,
        records: notes.map((n) => ({
          attributes: { type: 'Task' },
          Subject: `Reply: ${n.subject}`.slice(0, 255),
          Description: noteText(n).slice(0, 32_000),
          WhatId: n.companyId,
          ...(n.contactId ? { WhoId: n.contactId } : {}),
          Status: 'Completed',
          ActivityDate: new Date(n.receivedAt * 1000).toISOString().slice(0, 10),
          TaskSubtype: 'Email',
        })),
      });
      if (answer.status !== 200) {
        if (answer.status === 403) refuse(answer.status, answer.body, answer.text);
        const why = reason(answer.body, answer.text);
        return notes.map((): NoteOutcome => ({ result: 'failed', crmId: null, error: why }));
      }
      const results = documented('Salesforce', 'the new tasks', SAVE_RESULTS, answer);
      return notes.map((_, i): NoteOutcome => {
        const r = results[i];
        if (!r)
          return { result: 'failed', crmId: null, error: 'Salesforce returned no result for this task.' };
        return r.success
          ? { result: 'created', crmId: r.id ?? null, error: null }
          : { result: 'failed', crmId: null, error: reasonOf(r.errors) };
      });
    },
  };
}
