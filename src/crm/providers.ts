// What a sync asks of a CRM, whichever it is: check the credentials (and make the CRM ready for
// upserts by our listing id), upsert a batch of members with their contacts, add a batch of
// replies as notes. Each answer keeps the order of its input, one outcome per record, with the
// CRM's own reason for a record it refused; a failure of the whole call throws a CrmError.
import type { Outbound } from '../platform/outbound.ts';
import type { CrmHttpOptions } from './http.ts';

export type Provider = 'hubspot' | 'salesforce' | 'pipedrive';

export interface Credentials {
  /** HubSpot private-app token, Salesforce OAuth access token. */
  access_token?: string;
  /** Salesforce My Domain URL. */
  instance_url?: string;
  /** Pipedrive personal API token. */
  api_token?: string;
}

/** What the check call learned and later calls need (stored with the connection). */
export type Settings = Record<string, string>;

export interface MemberInput {
  listingId: string;
  name: string;
  email: string;
  website: string | null;
  phone: string | null;
  street: string | null;
  postalCode: string | null;
  city: string | null;
  region: string | null;
  country: string | null;
  formattedAddress: string | null;
  /** The CRM ids this connection already holds for the member, when a sync recorded them. */
  known: { company?: string; contact?: string };
}

export type RecordResult = 'created' | 'updated' | 'failed';

export interface ContactOutcome {
  result: RecordResult;
  crmId: string | null;
  error: string | null;
}

export interface MemberOutcome {
  result: RecordResult;
  crmId: string | null;
  error: string | null;
  contact: ContactOutcome | null;
}

export interface NoteInput {
  replyId: string;
  listingId: string;
  companyId: string;
  contactId: string | null;
  subject: string;
  text: string;
  from: string;
  fromName: string | null;
  receivedAt: number;
}

export interface NoteOutcome {
  result: 'created' | 'failed';
  crmId: string | null;
  error: string | null;
}

export interface CrmClient {
  readonly provider: Provider;
  /** Members per upsert call, as the CRM documents its batches. */
  readonly batchSize: number;
  /** The kind of CRM object a member becomes, and a reply. */
  readonly objects: {
    company: 'company' | 'account' | 'organization';
    contact: 'contact' | 'person';
    note: 'note' | 'task';
  };
  /** Checks the credentials with the CRM and prepares it; what later calls need. */
  check(): Promise<Settings>;
  upsertMembers(members: MemberInput[]): Promise<MemberOutcome[]>;
  addNotes(notes: NoteInput[]): Promise<NoteOutcome[]>;
}

export interface ClientContext {
  outbound: Outbound;
  credentials: Credentials;
  baseUrl: string | null;
  settings: Settings;
  /** Overrides of the HTTP behaviour (time limits, backoff, the shared wait budget). */
  http?: Partial<
    Pick<
      CrmHttpOptions,
      'timeoutMs' | 'retries' | 'backoffMs' | 'maxWaitMs' | 'budget' | 'signal' | 'sleep' | 'deadline'
    >
  >;
}

/** The host name of a website, for CRMs that key companies by domain. */
export function domainOf(website: string | null): string | null {
  if (!website) return null;
  try {
    return new URL(website).hostname.replace(/^www\./, '');
  } catch {
    return null;
  }
}

/** A reply as a note's text: who wrote, when, the subject, the body. */
export function noteText(note: NoteInput): string {
  const who = note.fromName ? `${note.fromName} <${note.from}>` : note.from;
  const when = new Date(note.receivedAt * 1000).toISOString().replace('.000Z', 'Z');
  return `Reply from ${who} on ${when}\nSubject: ${note.subject}\n\n${note.text}`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
