// What a sending domain publishes in DNS, and how a lookup's answer is judged against it.
//
// - `dkim`: TXT at `<selector>._domainkey.<domain>`, `v=DKIM1; k=rsa; p=<our public key>`. The
//   message's From is on `<domain>`, our signature has `d=<domain>`: DKIM passes aligned, which
//   alone makes DMARC pass.
// - `spf`: TXT at `reply.<domain>`, `v=spf1 include:<MAIL_SPF_INCLUDE> ~all`. The envelope sender
//   (MAIL FROM, where bounces go) is on `reply.<domain>`, so SPF is checked there and aligns
//   with the From domain under DMARC's relaxed rule.
// - `return_path`: MX of `reply.<domain>` to INBOUND_MAIL_HOST, so replies (`Reply-To:
//   r-<token>@reply.<domain>`) and bounces reach our inbound SMTP listener.
// - `dmarc`: TXT at `_dmarc.<domain>`, `v=DMARC1; p=none; ...` unless the domain has a policy of its
//   own already (any `v=DMARC1` record counts; one at the parent domain too). Gmail and Yahoo ask
//   bulk senders for one since 2024.
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import type { DnsRecord } from '../../generated/directory/client/types.gen.ts';

export type { DnsRecord };
/** `pending`: never looked up; then what the last lookup found. */
export type RecordStatus = DnsRecord['status'];

export interface RecordSettings {
  /** INBOUND_MAIL_HOST: the host the reply subdomain's MX points at. */
  inboundHost: string;
  /** MAIL_SPF_INCLUDE: the domain whose SPF record names the relay's addresses. */
  spfInclude: string;
}

export const replyDomainOf = (domain: string): string => `reply.${domain}`;

/** A new RSA 2048 key pair: the private key as PKCS#8 PEM, the public one as base64 SPKI DER (DKIM's `p=`). */
export async function newDkimKeyPair(): Promise<{ privateKey: string; publicKey: string }> {
  const { privateKey, publicKey } = await promisify(generateKeyPair)('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKey, publicKey: publicKey.toString('base64') };
}

/** The records a domain publishes, all pending. */
export function recordsOf(
  domain: string,
  selector: string,
  publicKey: string,
  settings: RecordSettings,
): DnsRecord[] {
  const pending = { status: 'pending' as const, found: null };
  return [
    {
      type: 'TXT',
      name: `${selector}._domainkey.${domain}`,
      value: `v=DKIM1; k=rsa; p=${publicKey}`,
      purpose: 'dkim',
      ...pending,
    },
    {
      type: 'TXT',
      name: replyDomainOf(domain),
      value: `v=spf1 include:${settings.spfInclude} ~all`,
      purpose: 'spf',
      ...pending,
    },
    {
      type: 'MX',
      name: replyDomainOf(domain),
      value: `10 ${settings.inboundHost}`,
      purpose: 'return_path',
      ...pending,
    },
    {
      type: 'TXT',
      name: `_dmarc.${domain}`,
      value: `v=DMARC1; p=none; adkim=r; aspf=r`,
      purpose: 'dmarc',
      ...pending,
    },
  ];
}

/** `k=v; k=v` tags of a DKIM or DMARC record, names lower-cased, whitespace removed. */
export function tagsOf(value: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of value.split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    tags.set(part.slice(0, at).trim().toLowerCase(), part.slice(at + 1).replace(/\s+/g, ''));
  }
  return tags;
}

const hostEq = (a: string, b: string) =>
  a.replace(/\.$/, '').toLowerCase() === b.replace(/\.$/, '').toLowerCase();

/**
 * The state of `record` given what DNS answered at its name: TXT records as their joined strings,
 * MX records as `{priority, exchange}`; `undefined` when the name has no record of the type.
 */
export function judge(
  record: DnsRecord,
  answer: string[] | Array<{ priority: number; exchange: string }> | undefined,
): { status: RecordStatus; found: string | null } {
  if (answer === undefined || answer.length === 0) return { status: 'missing', found: null };
  if (record.type === 'MX') {
    const mx = answer as Array<{ priority: number; exchange: string }>;
    const found = mx
      .slice()
      .sort((a, b) => a.priority - b.priority)
      .map((m) => `${m.priority} ${m.exchange}`)
      .join(', ');
    const host = record.value.split(' ')[1] ?? '';
    return { status: mx.some((m) => hostEq(m.exchange, host)) ? 'verified' : 'mismatch', found };
  }
  const txt = answer as string[];
  if (record.purpose === 'dkim') {
    const keys = txt.filter((t) => /^\s*v\s*=\s*DKIM1\b/i.test(t) || /(^|;)\s*p\s*=/.test(t));
    if (keys.length === 0) return { status: 'missing', found: txt.join(' | ') };
    const want = tagsOf(record.value).get('p');
    const match = keys.find((t) => tagsOf(t).get('p') === want);
    return { status: match ? 'verified' : 'mismatch', found: match ?? keys.join(' | ') };
  }
  if (record.purpose === 'spf') {
    const spf = txt.filter((t) => /^v=spf1(\s|$)/i.test(t.trim()));
    if (spf.length === 0) return { status: 'missing', found: txt.join(' | ') };
    // two SPF records are a permanent error for every receiver (RFC 7208 4.5)
    const include = `include:${record.value.split('include:')[1]?.split(' ')[0] ?? ''}`.toLowerCase();
    const ok =
      spf.length === 1 &&
      spf[0]!
        .toLowerCase()
        .split(/\s+/)
        .some((m) => m.replace(/^[+]/, '') === include);
    return { status: ok ? 'verified' : 'mismatch', found: spf.join(' | ') };
  }
  // dmarc: any policy of the domain's own counts (the customer may have p=quarantine or reject)
  const dmarc = txt.filter((t) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(t.trim()));
  if (dmarc.length === 0) return { status: 'missing', found: txt.join(' | ') };
  const ok = dmarc.length === 1 && /^(none|quarantine|reject)$/i.test(tagsOf(dmarc[0]!).get('p') ?? '');
  return { status: ok ? 'verified' : 'mismatch', found: dmarc.join(' | ') };
}

/** The domain's status from its records: verified when all are, failed when one is wrong, else pending. */
export function domainStatusOf(records: DnsRecord[]): 'pending' | 'verified' | 'failed' {
  if (records.every((r) => r.status === 'verified')) return 'verified';
  if (records.some((r) => r.status === 'mismatch')) return 'failed';
  return 'pending';
}
