// Sending domains of a project: adding one makes an RSA 2048 DKIM key pair (the private half
// sealed at rest with the secrets box, never returned) and the DNS records to publish; `verify`
// looks them up (dns.ts) and keeps each record's state and the value found. Campaigns read the
// signing material of a verified domain here (`verifiedDomain`), the inbound listener the
// domains a `reply.<domain>` host belongs to (`replyDomains`).
import { randomBytes } from 'node:crypto';
import type { DnsRecord, SendingDomain } from '../../generated/directory/client/types.gen.ts';
import type { Db } from '../platform/db.ts';
import { ApiError, BadRequestError, ConflictError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { decodeCursor, type Page, pageOf } from '../platform/pagination.ts';
import type { SecretBox } from '../platform/secrets.ts';
import { checkRecords, DnsLookupError, type Lookup } from './dns.ts';
import { newDkimKeyPair, type RecordSettings, recordsOf, replyDomainOf } from './records.ts';
import type { DkimKey } from './transport.ts';
import { nowSeconds } from '../platform/clock.ts';

export type SendingDomainStatus = SendingDomain['status'];

/** What a campaign needs to send from a verified domain. */
export interface VerifiedDomain {
  id: string;
  accountId: string;
  projectId: string;
  /** The From address must be on this domain (`hello@<domain>`). */
  domain: string;
  /** `reply.<domain>`: Reply-To tokens and the envelope sender (bounces) go here. */
  replyDomain: string;
  fromName: string | null;
  /** The signing key, decrypted only when the transport calls `privateKey()`. */
  dkim: DkimKey;
}

/** A verified domain whose `reply.<domain>` an inbound message was addressed to. */
export interface ReplyDomain {
  id: string;
  accountId: string;
  projectId: string;
  domain: string;
}

interface Row {
  id: string;
  account_id: string;
  project_id: string;
  domain: string;
  from_name: string | null;
  dkim_selector: string;
  dkim_private_key_sealed: string;
  dns_records: DnsRecord[];
  status: SendingDomainStatus;
  verified_at: number | null;
  last_checked_at: number | null;
  created: number;
}

function viewOf(row: Row): SendingDomain {
  return {
    id: row.id,
    object: 'sending_domain',
    domain: row.domain,
    reply_domain: replyDomainOf(row.domain),
    from_name: row.from_name,
    status: row.status,
    dns_records: row.dns_records,
    dkim_selector: row.dkim_selector,
    verified_at: row.verified_at === null ? null : Number(row.verified_at),
    last_checked_at: row.last_checked_at === null ? null : Number(row.last_checked_at),
    created: Number(row.created),
  };
}

const now = () => nowSeconds();

/** `eurus-` and 8 random lower-case characters: a selector of its own per domain row (DNS labels). */
function newSelector(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `eurus-${[...randomBytes(8)].map((b) => alphabet[b % 36]).join('')}`;
}

export interface DomainStoreOptions extends RecordSettings {
  /** The resolvers `verify` asks (DNS_SERVERS). */
  lookup: Lookup;
  /** Whether a campaign that is scheduled, sending or paused uses the domain (src/sales owns campaigns). */
  inUse(projectId: string, domainId: string): Promise<boolean>;
}

export class SendingDomainStore {
  readonly #db: Db;
  readonly #box: SecretBox | undefined;
  readonly #options: DomainStoreOptions;

  constructor(db: Db, box: SecretBox | undefined, options: DomainStoreOptions) {
    this.#db = db;
    this.#box = box;
    this.#options = options;
  }

  async create(
    owner: { accountId: string; projectId: string },
    input: { domain: string; from_name?: string | undefined },
  ): Promise<SendingDomain> {
    const box = this.#box;
    if (box === undefined) {
      throw new BadRequestError(
        'secrets_unavailable',
        'This deployment has no SECRETS_ENCRYPTION_KEY, so it cannot keep DKIM keys; ask its operator to set one.',
      );
    }
    const domain = input.domain.toLowerCase();
    if (domain.length > 200) {
      throw new BadRequestError(
        'domain_too_long',
        'The domain is longer than 200 characters: its DKIM record name would not fit in DNS.',
        { param: 'domain' },
      );
    }
    const [taken] = await this.#db.query(
      'select 1 from sending_domains where project_id = $1 and domain = $2',
      [owner.projectId, domain],
    );
    if (taken) throw this.#exists(domain);
    const id = newId('sd');
    const selector = newSelector();
    const { privateKey, publicKey } = await newDkimKeyPair();
    const records = recordsOf(domain, selector, publicKey, this.#options);
    const rows = await this.#db.query<Row>(
      `insert into sending_domains (id, account_id, project_id, domain, from_name, dkim_selector,
         dkim_private_key_sealed, dns_records, created)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       on conflict (project_id, domain) do nothing returning *`,
      [
        id,
        owner.accountId,
        owner.projectId,
        domain,
        input.from_name ?? null,
        selector,
        box.seal(privateKey, id),
        JSON.stringify(records),
        now(),
      ],
    );
    if (!rows[0]) throw this.#exists(domain); // added at the same moment by another request
    return viewOf(rows[0]);
  }

  #exists(domain: string): ApiError {
    return new ConflictError(
      'domain_exists',
      `The domain ${domain} is already a sending domain of this project.`,
      {
        param: 'domain',
      },
    );
  }

  async #row(projectId: string, id: string): Promise<Row> {
    const [row] = await this.#db.query<Row>(
      'select * from sending_domains where id = $1 and project_id = $2',
      [id, projectId],
    );
    if (!row) throw new NotFoundError('sending_domain_not_found', `No sending domain ${id} in this project.`);
    return row;
  }

  async get(projectId: string, id: string): Promise<SendingDomain> {
    return viewOf(await this.#row(projectId, id));
  }

  async list(projectId: string, limit: number, cursor: string | undefined): Promise<Page<SendingDomain>> {
    const after = decodeCursor(cursor);
    const rows = await this.#db.query<Row>(
      `select * from sending_domains where project_id = $1
         and ($2::bigint is null or (created, id) < ($2::bigint, $3::text))
       order by created desc, id desc limit $4`,
      [projectId, after?.k ?? null, after?.id ?? '', limit + 1],
    );
    return pageOf(rows, limit, viewOf, (r) => ({ k: Number(r.created), id: r.id }));
  }

  async delete(projectId: string, id: string): Promise<void> {
    await this.#row(projectId, id);
    if (await this.#options.inUse(projectId, id)) {
      throw new ConflictError(
        'sending_domain_in_use',
        `The sending domain ${id} is used by a scheduled or sending campaign; cancel or finish it first.`,
      );
    }
    await this.#db.query('delete from sending_domains where id = $1 and project_id = $2', [id, projectId]);
  }

  /**
   * Looks every record up now and stores what was found. Verified when every record is; failed
   * when one answers with another value, or when a domain verified before lost one; else pending.
   */
  async verify(projectId: string, id: string): Promise<SendingDomain> {
    const row = await this.#row(projectId, id);
    let checked: DnsRecord[];
    try {
      checked = await checkRecords(this.#options.lookup, row.dns_records);
    } catch (err) {
      if (!(err instanceof DnsLookupError)) throw err;
      if (err.timedOut)
        throw new ApiError(504, 'dns_timeout', `The DNS resolvers did not answer: ${err.message}.`);
      throw new ApiError(502, 'dns_lookup_failed', `The DNS resolvers failed: ${err.message}.`);
    }
    const all = checked.every((r) => r.status === 'verified');
    const status: SendingDomainStatus = all
      ? 'verified'
      : checked.some((r) => r.status === 'mismatch') || row.status === 'verified'
        ? 'failed'
        : 'pending';
    const at = now();
    const [updated] = await this.#db.query<Row>(
      `update sending_domains set dns_records = $3, status = $4, last_checked_at = $5,
         verified_at = case when $4 = 'verified' then coalesce(verified_at, $5) else verified_at end
       where id = $1 and project_id = $2 returning *`,
      [id, projectId, JSON.stringify(checked), status, at],
    );
    if (!updated)
      throw new NotFoundError('sending_domain_not_found', `No sending domain ${id} in this project.`);
    return viewOf(updated);
  }

  /**
   * The signing material of a domain that may send: 404 `sending_domain_not_found` when the
   * project has no such domain, 409 `sending_domain_not_verified` when its last check did not
   * verify it.
   */
  async verifiedDomain(projectId: string, id: string): Promise<VerifiedDomain> {
    const row = await this.#row(projectId, id);
    if (row.status !== 'verified') {
      throw new ConflictError(
        'sending_domain_not_verified',
        `The sending domain ${row.domain} is ${row.status}, not verified: publish its DNS records and call POST /v1/sending-domains/${id}/verify.`,
        { param: 'sending_domain_id' },
      );
    }
    const box = this.#box;
    const sealed = row.dkim_private_key_sealed;
    return {
      id: row.id,
      accountId: row.account_id,
      projectId: row.project_id,
      domain: row.domain,
      replyDomain: replyDomainOf(row.domain),
      fromName: row.from_name,
      dkim: {
        domain: row.domain,
        selector: row.dkim_selector,
        privateKey: () => {
          if (box === undefined) throw new Error('no secrets key to open the DKIM key with');
          return box.open(sealed, row.id);
        },
      },
    };
  }

  /**
   * The domains whose reply host `host` is (`reply.<domain>`, any case), among those verified at
   * least once: a domain that fails a later check still receives the replies to mail it sent.
   * Empty: the listener refuses the recipient (550).
   */
  async replyDomains(host: string): Promise<ReplyDomain[]> {
    const lower = host.toLowerCase().replace(/\.$/, '');
    if (!lower.startsWith('reply.')) return [];
    const rows = await this.#db.query<Row>(
      'select id, account_id, project_id, domain from sending_domains where domain = $1 and verified_at is not null order by created',
      [lower.slice('reply.'.length)],
    );
    return rows.map((r) => ({
      id: r.id,
      accountId: r.account_id,
      projectId: r.project_id,
      domain: r.domain,
    }));
  }
}
