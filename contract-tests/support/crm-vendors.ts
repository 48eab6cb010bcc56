// The three CRMs for the CRM suites: each a small stateful store of ours (so that a second sync
// can find what the first created: Prism's own mock is stateless) behind `prism proxy --errors`
// on the vendor's published description (contract-tests/vendor-specs/<vendor>/openapi.yaml), so
// every request we send and every answer the store gives is validated against the vendor's
// contract: a request that breaks it is a 422 from Prism, an answer that breaks it a 500, and
// either lands in `violations()`, which the suites require to be empty.
//
// The stores keep only what the operations we call need. Knobs: a token that works (`token`),
// `revokeAfter(n)` (the token stops working after n more calls), `rateLimitOnce(path, after)`
// (one 429 with Retry-After on the nth call to a path), `refuse(listingId, message)` (the CRM
// refuses that record), and for HubSpot the category its associations come back with and the
// fields its unique property already has.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { freePort, stop, waitForHttp } from './processes.ts';

export type Vendor = 'hubspot' | 'salesforce' | 'pipedrive';

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface CallLog {
  method: string;
  path: string;
  status: number;
  body: unknown;
}

export interface FakeCrm {
  readonly vendor: Vendor;
  /** The URL to give a connection as its base_url: Prism's proxy in front of the store. */
  url: string;
  token: string;
  calls: CallLog[];
  /** Organizations / companies / accounts held, by our listing id. */
  companies: Map<string, { id: string; properties: Record<string, unknown> }>;
  /** Contacts / persons held, by email (HubSpot, Pipedrive) or by listing id (Salesforce). */
  contacts: Map<string, { id: string; properties: Record<string, unknown> }>;
  notes: { id: string; body: Record<string, unknown> }[];
  revokeAfter(calls: number): void;
  rateLimitOnce(pathStart: string, afterCalls: number, retryAfterSeconds?: number): void;
  refuse(listingId: string, message: string): void;
  /** The CRM takes that record again. */
  accept(listingId: string): void;
  /** HubSpot: the default association of this contact (by email) fails, inside a 200 answer. */
  refuseAssociation(email: string, message: string): void;
  /** HubSpot: the category default associations are answered with (HUBSPOT_DEFINED by default). */
  associationCategory: string;
  /** HubSpot: the unique property exists already, with these fields over ours (e.g. a `type`). */
  existingProperty: Record<string, unknown> | undefined;
  /** Prism's log lines that report a request or answer breaking the vendor's contract. */
  violations(): string[];
  close(): Promise<void>;
}

function send(res: ServerResponse, answer: Answer): void {
  res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
  res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
}

async function read(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

const iso = () => new Date().toISOString();

type Route = (req: { method: string; url: URL; body: unknown }) => Answer;

/** The store's routes, per vendor; `state` is the FakeCrm they fill. */
function routesOf(vendor: Vendor, state: FakeCrm, refused: Map<string, string>): Route {
  let seq = 1000;
  const nextId = () => String(++seq);
  switch (vendor) {
    case 'hubspot': {
      const VERSION = '2026-09';
      let propertyMade = false;
      const property = () => ({
        name: 'eurus_listing_id',
        label: 'Eurus listing ID',
        type: 'string',
        fieldType: 'text',
        description: '',
        groupName: 'companyinformation',
        options: [],
        hasUniqueValue: true,
      });
      // the 2026-09 documents: refused inputs are `errors` of the 200, never a 207
      const batch = (results: unknown[], errors: unknown[]) => ({
        status: 200,
        body: {
          status: 'COMPLETE',
          results,
          ...(errors.length ? { errors, numErrors: errors.length } : {}),
          startedAt: iso(),
          completedAt: iso(),
        },
      });
      const standardError = (message: string, trace: string) => ({
        status: 'error',
        category: 'VALIDATION_ERROR',
        message,
        errors: [],
        context: { objectWriteTraceId: [trace] },
        links: {},
      });
      return ({ method, url, body }) => {
        const path = url.pathname;
        if (method === 'GET' && path === `/crm/properties/${VERSION}/companies/eurus_listing_id`) {
          if (state.existingProperty)
            return { status: 200, body: { ...property(), ...state.existingProperty } };
          return propertyMade
            ? { status: 200, body: property() }
            : {
                status: 404,
                body: {
                  message: 'Unable to find property eurus_listing_id',
                  correlationId: randomUUID(),
                  category: 'OBJECT_NOT_FOUND',
                },
              };
        }
        if (method === 'POST' && path === `/crm/properties/${VERSION}/companies`) {
          propertyMade = true;
          return { status: 201, body: property() };
        }
        const upsert = (
          store: FakeCrm['companies'],
          key: (i: { id: string; properties: Record<string, string> }) => string,
        ) => {
          const inputs = (
            body as {
              inputs: {
                id: string;
                idProperty?: string;
                objectWriteTraceId?: string;
                properties: Record<string, string>;
              }[];
            }
          ).inputs;
          const results: unknown[] = [];
          const errors: unknown[] = [];
          for (const input of inputs) {
            const k = key(input);
            const why = refused.get(k);
            if (why) {
              errors.push(standardError(why, input.objectWriteTraceId ?? k));
              continue;
            }
            const old = store.get(k);
            const record = {
              id: old?.id ?? nextId(),
              properties: { ...old?.properties, ...input.properties },
            };
            store.set(k, record);
            results.push({
              id: record.id,
              new: !old,
              properties: record.properties,
              createdAt: iso(),
              updatedAt: iso(),
              archived: false,
            });
          }
          return batch(results, errors);
        };
        if (method === 'POST' && path === `/crm/objects/${VERSION}/companies/batch/upsert`) {
          return upsert(state.companies, (i) => i.id);
        }
        if (method === 'POST' && path === `/crm/objects/${VERSION}/contacts/batch/upsert`) {
          return upsert(state.contacts, (i) => i.id.toLowerCase());
        }
        if (
          method === 'POST' &&
          path === `/crm/associations/${VERSION}/contacts/companies/batch/associate/default`
        ) {
          // HubSpot answers 200 even when some pairs failed: `errors` and `numErrors` tell which
          const inputs = (body as { inputs: { from: { id: string }; to: { id: string } }[] }).inputs;
          const emailOf = (id: string) => [...state.contacts].find(([, c]) => c.id === id)?.[0];
          const results: unknown[] = [];
          const errors: unknown[] = [];
          for (const i of inputs) {
            const why = refused.get(`associate:${emailOf(i.from.id) ?? ''}`);
            if (why) {
              errors.push({ ...standardError(why, i.from.id), context: { fromObjectId: [i.from.id] } });
              continue;
            }
            results.push({
              from: i.from,
              to: i.to,
              associationSpec: { associationCategory: state.associationCategory, associationTypeId: 279 },
            });
          }
          return {
            status: 200,
            body: {
              status: 'COMPLETE',
              results,
              ...(errors.length ? { errors, numErrors: errors.length } : {}),
              startedAt: iso(),
              completedAt: iso(),
            },
          };
        }
        if (method === 'POST' && path === `/crm/objects/${VERSION}/notes/batch/create`) {
          const inputs = (
            body as { inputs: { objectWriteTraceId?: string; properties: Record<string, string> }[] }
          ).inputs;
          const results = inputs.map((i) => {
            const id = nextId();
            state.notes.push({ id, body: i as unknown as Record<string, unknown> });
            return {
              id,
              objectWriteTraceId: i.objectWriteTraceId,
              properties: i.properties,
              createdAt: iso(),
              updatedAt: iso(),
              archived: false,
            };
          });
          return { status: 201, body: { status: 'COMPLETE', results, startedAt: iso(), completedAt: iso() } };
        }
        return {
          status: 404,
          body: {
            message: `no route ${method} ${path}`,
            correlationId: randomUUID(),
            category: 'OBJECT_NOT_FOUND',
          },
        };
      };
    }
    case 'salesforce': {
      const sfId = (prefix: string) => `${prefix}5g00000${String(++seq).padStart(8, '0')}`;
      return ({ method, url, body }) => {
        const path = url.pathname;
        const describe = /^\/services\/data\/v62\.0\/sobjects\/(Account|Contact)\/describe$/.exec(path);
        if (method === 'GET' && describe) {
          return {
            status: 200,
            body: {
              name: describe[1],
              label: describe[1],
              fields: [
                { name: 'Id', type: 'id', externalId: false },
                { name: 'Name', type: 'string', externalId: false },
                { name: 'Eurus_Listing_Id__c', type: 'string', externalId: true, unique: true, custom: true },
              ],
            },
          };
        }
        const upsert =
          /^\/services\/data\/v62\.0\/composite\/sobjects\/(Account|Contact)\/Eurus_Listing_Id__c$/.exec(
            path,
          );
        if (method === 'PATCH' && upsert) {
          const store = upsert[1] === 'Account' ? state.companies : state.contacts;
          const records = (body as { records: Record<string, unknown>[] }).records;
          return {
            status: 200,
            body: records.map((r) => {
              const key = String(r.Eurus_Listing_Id__c);
              const why = refused.get(key);
              if (why)
                return {
                  id: null,
                  success: false,
                  errors: [{ statusCode: 'FIELD_CUSTOM_VALIDATION_EXCEPTION', message: why, fields: [] }],
                };
              if (upsert[1] === 'Contact') {
                const account = (r.Account as Record<string, string> | undefined)?.Eurus_Listing_Id__c;
                if (!account || !state.companies.has(account)) {
                  return {
                    id: null,
                    success: false,
                    errors: [
                      {
                        statusCode: 'INVALID_FIELD',
                        message: 'Foreign key external ID not found',
                        fields: [],
                      },
                    ],
                  };
                }
              }
              const old = store.get(key);
              const rec = {
                id: old?.id ?? sfId(upsert[1] === 'Account' ? '001' : '003'),
                properties: { ...old?.properties, ...r },
              };
              store.set(key, rec);
              return { id: rec.id, success: true, errors: [], created: !old };
            }),
          };
        }
        if (method === 'POST' && path === '/services/data/v62.0/composite/sobjects') {
          const records = (body as { records: Record<string, unknown>[] }).records;
          return {
            status: 200,
            body: records.map((r) => {
              const id = sfId('00T');
              state.notes.push({ id, body: r });
              return { id, success: true, errors: [] };
            }),
          };
        }
        return {
          status: 404,
          body: [{ message: `The requested resource does not exist: ${path}`, errorCode: 'NOT_FOUND' }],
        };
      };
    }
    case 'pipedrive': {
      const fields: {
        field_name: string;
        field_code: string;
        field_type: string;
        is_custom_field: boolean;
        is_optional_response_field: boolean;
      }[] = [
        {
          field_name: 'Name',
          field_code: 'name',
          field_type: 'varchar',
          is_custom_field: false,
          is_optional_response_field: false,
        },
      ];
      const orgsById = new Map<number, string>();
      const personsById = new Map<number, string>();
      const key = () => fields.find((f) => f.field_name === 'Eurus listing ID')?.field_code ?? '';
      const failure = (status: number, error: string) => ({
        status,
        body: { success: false, error, data: null },
      });
      return ({ method, url, body }) => {
        const path = url.pathname;
        if (path === '/api/v2/organizationFields' && method === 'GET') {
          return {
            status: 200,
            body: { success: true, data: fields, additional_data: {} },
          };
        }
        if (path === '/api/v2/organizationFields' && method === 'POST') {
          const f = {
            field_name: (body as { field_name: string }).field_name,
            field_code: randomUUID().replace(/-/g, '').slice(0, 40).padEnd(40, 'a'),
            field_type: (body as { field_type: string }).field_type,
            is_custom_field: true,
            is_optional_response_field: false,
          };
          fields.push(f);
          return { status: 200, body: { success: true, data: f } };
        }
        const org = (id: number) => {
          const listing = orgsById.get(id)!;
          const o = state.companies.get(listing)!;
          return {
            id,
            name: o.properties.name,
            custom_fields: o.properties.custom_fields,
            visible_to: 3,
            owner_id: 1,
            is_deleted: false,
          };
        };
        const person = (id: number) => {
          const email = personsById.get(id)!;
          const p = state.contacts.get(email)!;
          return {
            id,
            name: p.properties.name,
            emails: p.properties.emails,
            org_id: p.properties.org_id ?? null,
            owner_id: 1,
            visible_to: 3,
            is_deleted: false,
          };
        };
        if (path === '/api/v2/organizations/search' && method === 'GET') {
          const term = url.searchParams.get('term') ?? '';
          const hit = state.companies.get(term);
          const items = hit
            ? [
                {
                  result_score: 1,
                  item: {
                    id: Number(hit.id),
                    type: 'organization',
                    name: String(hit.properties.name),
                    visible_to: 3,
                    owner: { id: 1 },
                    custom_fields: [term],
                  },
                },
              ]
            : [];
          return {
            status: 200,
            body: { success: true, data: { items }, additional_data: {} },
          };
        }
        if (path === '/api/v2/persons/search' && method === 'GET') {
          const term = (url.searchParams.get('term') ?? '').toLowerCase();
          const hit = state.contacts.get(term);
          const items = hit
            ? [
                {
                  result_score: 1,
                  item: {
                    id: Number(hit.id),
                    type: 'person',
                    name: String(hit.properties.name),
                    emails: [term],
                    phones: [],
                    visible_to: 3,
                    owner: { id: 1 },
                    custom_fields: [],
                  },
                },
              ]
            : [];
          return {
            status: 200,
            body: { success: true, data: { items }, additional_data: {} },
          };
        }
        if (path === '/api/v2/organizations' && method === 'POST') {
          const b = body as { name: string; custom_fields?: Record<string, string> };
          const listing = b.custom_fields?.[key()];
          if (!listing) return failure(400, 'The organization field Eurus listing ID is missing');
          const why = refused.get(listing);
          if (why) return failure(400, why);
          const id = Number(nextId());
          state.companies.set(listing, { id: String(id), properties: { ...b } });
          orgsById.set(id, listing);
          return { status: 200, body: { success: true, data: org(id) } };
        }
        const orgPatch = /^\/api\/v2\/organizations\/(\d+)$/.exec(path);
        if (orgPatch && method === 'PATCH') {
          const id = Number(orgPatch[1]);
          const listing = orgsById.get(id);
          if (!listing) return failure(404, 'Organization not found');
          const why = refused.get(listing);
          if (why) return failure(400, why);
          const old = state.companies.get(listing)!;
          state.companies.set(listing, {
            id: old.id,
            properties: { ...old.properties, ...(body as object) },
          });
          return { status: 200, body: { success: true, data: org(id) } };
        }
        if (path === '/api/v2/persons' && method === 'POST') {
          const b = body as { name: string; emails: { value: string }[] };
          const email = b.emails[0]!.value.toLowerCase();
          const id = Number(nextId());
          state.contacts.set(email, { id: String(id), properties: { ...b } });
          personsById.set(id, email);
          return { status: 200, body: { success: true, data: person(id) } };
        }
        const personPatch = /^\/api\/v2\/persons\/(\d+)$/.exec(path);
        if (personPatch && method === 'PATCH') {
          const id = Number(personPatch[1]);
          const email = personsById.get(id);
          if (!email) return failure(404, 'Person not found');
          const old = state.contacts.get(email)!;
          state.contacts.set(email, { id: old.id, properties: { ...old.properties, ...(body as object) } });
          return { status: 200, body: { success: true, data: person(id) } };
        }
        if (path === '/v1/notes' && method === 'POST') {
          const id = Number(nextId());
          state.notes.push({ id: String(id), body: body as Record<string, unknown> });
          return {
            status: 200,
            body: {
              success: true,
              data: {
                id,
                content: (body as { content: string }).content,
                org_id: (body as { org_id?: number }).org_id ?? null,
              },
            },
          };
        }
        return failure(404, `no route ${method} ${path}`);
      };
    }
  }
}

function authorized(vendor: Vendor, req: IncomingMessage, token: string): boolean {
  return vendor === 'pipedrive'
    ? req.headers['x-api-token'] === token
    : req.headers.authorization === `Bearer ${token}`;
}

function unauthorized(vendor: Vendor): Answer {
  switch (vendor) {
    case 'hubspot':
      return {
        status: 401,
        body: {
          status: 'error',
          message: 'Authentication credentials not found. This API supports OAuth 2.0 authentication.',
          correlationId: randomUUID(),
          category: 'INVALID_AUTHENTICATION',
        },
      };
    case 'salesforce':
      return {
        status: 401,
        body: [{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }],
      };
    case 'pipedrive':
      return {
        status: 401,
        body: {
          success: false,
          error: 'unauthorized access',
          errorCode: 401,
          error_info: 'Please check developers.pipedrive.com',
        },
      };
  }
}

function tooMany(vendor: Vendor, seconds: number): Answer {
  switch (vendor) {
    case 'hubspot':
      return {
        status: 429,
        headers: {
          'retry-after': String(seconds),
          'x-hubspot-ratelimit-max': '190',
          'x-hubspot-ratelimit-remaining': '0',
          'x-hubspot-ratelimit-interval-milliseconds': '10000',
        },
        body: {
          status: 'error',
          message: 'You have reached your secondly limit.',
          errorType: 'RATE_LIMIT',
          correlationId: randomUUID(),
          policyName: 'SECONDLY',
          category: 'RATE_LIMITS',
        },
      };
    case 'salesforce':
      return {
        status: 429,
        headers: { 'retry-after': String(seconds) },
        body: [{ message: 'Too many requests', errorCode: 'REQUEST_LIMIT_EXCEEDED' }],
      };
    case 'pipedrive':
      return {
        status: 429,
        headers: {
          'x-ratelimit-limit': '80',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(seconds),
        },
        body: { success: false, error: 'Request over limit', data: null },
      };
  }
}

export async function startFakeCrm(vendor: Vendor): Promise<FakeCrm> {
  const refused = new Map<string, string>();
  let revokeIn: number | undefined;
  const limits: { pathStart: string; after: number; seconds: number; seen: number }[] = [];
  const prismLog: string[] = [];
  const held: { prism?: ChildProcess; server?: Server } = {};

  const state: FakeCrm = {
    vendor,
    url: '',
    token: `${vendor}-token-${randomUUID()}`,
    calls: [],
    companies: new Map(),
    contacts: new Map(),
    notes: [],
    revokeAfter(calls) {
      revokeIn = calls;
    },
    rateLimitOnce(pathStart, afterCalls, retryAfterSeconds = 1) {
      limits.push({ pathStart, after: afterCalls, seconds: retryAfterSeconds, seen: 0 });
    },
    associationCategory: 'HUBSPOT_DEFINED',
    existingProperty: undefined,
    refuseAssociation(email, message) {
      refused.set(`associate:${email.toLowerCase()}`, message);
    },
    refuse(listingId, message) {
      refused.set(listingId, message);
    },
    accept(listingId) {
      refused.delete(listingId);
    },
    violations: () =>
      prismLog.filter((l) =>
        /VIOLATIONS|UNPROCESSABLE_ENTITY|did not pass the validation|Violation/i.test(l),
      ),
    async close() {
      await stop(held.prism);
      await new Promise<void>((resolve) => (held.server ? held.server.close(() => resolve()) : resolve()));
    },
  };
  const route = routesOf(vendor, state, refused);

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const method = req.method ?? 'GET';
      const body = await read(req);
      let answer: Answer;
      if (revokeIn !== undefined && revokeIn-- <= 0) state.token = `revoked-${randomUUID()}`;
      const limit = limits.find((l) => url.pathname.startsWith(l.pathStart) && ++l.seen === l.after);
      if (!authorized(vendor, req, state.token)) answer = unauthorized(vendor);
      else if (limit) answer = tooMany(vendor, limit.seconds);
      else answer = route({ method, url, body });
      state.calls.push({ method, path: url.pathname + url.search, status: answer.status, body });
      send(res, answer);
    })().catch((err: unknown) => send(res, { status: 500, body: { message: String(err) } }));
  });
  const upstream = await freePort();
  held.server = server;
  await new Promise<void>((resolve) => server.listen(upstream, '127.0.0.1', resolve));

  const port = await freePort();
  const prism = spawn(
    'node_modules/.bin/prism',
    [
      'proxy',
      '--errors',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      `contract-tests/vendor-specs/${vendor}/openapi.yaml`,
      `http://127.0.0.1:${upstream}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  held.prism = prism;
  for (const stream of [prism.stdout!, prism.stderr!]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => prismLog.push(...chunk.split('\n').filter(Boolean)));
  }
  state.url = `http://127.0.0.1:${port}`;
  await waitForHttp(state.url, prism, 90_000);
  return state;
}
