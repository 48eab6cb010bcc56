import { describe, expect, it } from 'vitest';
import { type DnsRecord, judge, recordsOf } from './records.ts';

const [dkim, spf, mx, dmarc] = recordsOf('mail.example.de', 'eurus-abc', 'MIIBkey+/=', {
  inboundHost: 'mx.eurus.test',
  spfInclude: 'spf.eurus.test',
}) as [DnsRecord, DnsRecord, DnsRecord, DnsRecord];

describe('judging what DNS answered', () => {
  it('DKIM: the same key whatever the spacing, another key a mismatch, no key record missing', () => {
    expect(judge(dkim, ['v=DKIM1;k=rsa;  p=MIIB key+/=']).status).toBe('verified');
    expect(judge(dkim, ['v=DKIM1; k=rsa; p=MIIBother'])).toEqual({
      status: 'mismatch',
      found: 'v=DKIM1; k=rsa; p=MIIBother',
    });
    expect(judge(dkim, ['google-site-verification=abc']).status).toBe('missing');
    expect(judge(dkim, undefined)).toEqual({ status: 'missing', found: null });
  });

  it('SPF: our include among others passes; none, or two SPF records, is a mismatch', () => {
    expect(judge(spf, ['v=spf1 ip4:192.0.2.1 include:spf.eurus.test -all']).status).toBe('verified');
    expect(judge(spf, ['v=spf1 +include:SPF.eurus.test ~all']).status).toBe('verified');
    expect(judge(spf, ['v=spf1 include:_spf.google.com ~all']).status).toBe('mismatch');
    expect(
      judge(spf, ['v=spf1 include:spf.eurus.test ~all', 'v=spf1 include:_spf.google.com ~all']).status,
    ).toBe('mismatch');
    expect(judge(spf, ['some other text']).status).toBe('missing');
  });

  it('MX: any exchange that is our host, trailing dot or case aside', () => {
    expect(
      judge(mx, [
        { priority: 20, exchange: 'backup.example.de' },
        { priority: 10, exchange: 'MX.eurus.test.' },
      ]),
    ).toEqual({ status: 'verified', found: '10 MX.eurus.test., 20 backup.example.de' });
    expect(judge(mx, [{ priority: 10, exchange: 'mx.other.test' }]).status).toBe('mismatch');
  });

  it("DMARC: the domain's own policy counts; a record without a valid p= is a mismatch", () => {
    expect(judge(dmarc, ['v=DMARC1; p=reject; rua=mailto:d@example.de']).status).toBe('verified');
    expect(judge(dmarc, ['v=DMARC1; rua=mailto:d@example.de']).status).toBe('mismatch');
    expect(judge(dmarc, ['v=spf1 -all']).status).toBe('missing');
  });
});
