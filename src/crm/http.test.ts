// The CRM caller's handling of the CRMs' limits and failures, on a scripted outbound door.
import { describe, expect, it } from 'vitest';
import type { Outbound, OutboundAnswer } from '../platform/outbound.ts';
import { CrmError, CrmHttp, retryAfterMs } from './http.ts';

function door(answers: (Partial<OutboundAnswer> | Error)[]): Outbound & { calls: number } {
  const d = {
    calls: 0,
    check: () => Promise.reject(new Error('unused')),
    fetch: () => Promise.reject(new Error('unused')),
    address: () => Promise.reject(new Error('unused')),
    open: () => {
      throw new Error('unused');
    },
    close: () => Promise.resolve(),
    async request() {
      const a = answers[Math.min(d.calls++, answers.length - 1)]!;
      if (a instanceof Error) throw a;
      return { status: 200, body: '{}', headers: {}, durationMs: 1, ...a };
    },
  };
  return d;
}

function http(outbound: Outbound, slept: number[], extra: Record<string, unknown> = {}) {
  return new CrmHttp(outbound, {
    vendor: 'TestCRM',
    baseUrl: 'https://crm.example',
    headers: {},
    reason: (body) => (body as { message?: string } | null)?.message ?? 'none',
    unauthorized: (status) => status === 401,
    backoffMs: 10,
    sleep: async (ms) => void slept.push(ms),
    ...extra,
  });
}

describe('CrmHttp', () => {
  it('reads Retry-After in seconds and as a date, then the CRMs own rate headers', () => {
    expect(retryAfterMs({ 'retry-after': '3' })).toBe(3000);
    expect(retryAfterMs({ 'retry-after': new Date(10_000).toUTCString() }, 4000)).toBe(6000);
    expect(retryAfterMs({ 'x-ratelimit-reset': '2' })).toBe(2000);
    expect(retryAfterMs({ 'x-hubspot-ratelimit-interval-milliseconds': '10000' })).toBe(10_000);
    expect(retryAfterMs({})).toBe(1000);
  });

  it('waits out a 429 for as long as the CRM says, then answers', async () => {
    const slept: number[] = [];
    const d = door([
      { status: 429, headers: { 'retry-after': '2' } },
      { status: 200, body: '{"ok":true}' },
    ]);
    const answer = await http(d, slept).call('GET', '/x');
    expect(answer.body).toEqual({ ok: true });
    expect(slept).toEqual([2000]);
    expect(d.calls).toBe(2);
  });

  it('gives up on a 429 longer than a sync waits, as crm_rate_limited', async () => {
    const d = door([{ status: 429, headers: { 'retry-after': '600' } }]);
    await expect(http(d, [], { maxWaitMs: 60_000 }).call('GET', '/x')).rejects.toMatchObject({
      code: 'crm_rate_limited',
    });
  });

  it('spends a shared budget of waiting across calls', async () => {
    const budget = { waitMs: 2500 };
    const d = door([
      { status: 429, headers: { 'retry-after': '2' } },
      { status: 200 },
      { status: 429, headers: { 'retry-after': '2' } },
    ]);
    const h = http(d, [], { budget });
    await h.call('GET', '/x');
    expect(budget.waitMs).toBe(500);
    await expect(h.call('GET', '/x')).rejects.toMatchObject({ code: 'crm_rate_limited' });
  });

  it('retries 5xx and network failures with growing backoff, then fails as crm_unavailable', async () => {
    const slept: number[] = [];
    const d = door([
      { status: 503, body: '{"message":"maintenance"}' },
      new Error('ECONNRESET'),
      { status: 502 },
      { status: 500 },
      { status: 500, body: '{"message":"down"}' },
    ]);
    const err = (await http(d, slept)
      .call('GET', '/x')
      .catch((e: unknown) => e)) as CrmError;
    expect(err).toBeInstanceOf(CrmError);
    expect(err.code).toBe('crm_unavailable');
    expect(err.message).toBe('TestCRM failed (500): down');
    expect(d.calls).toBe(5);
    expect(slept).toHaveLength(4);
    for (let i = 1; i < slept.length; i++) expect(slept[i]).toBeGreaterThan(slept[i - 1]!);
  });

  it('stops at once on rejected credentials, with the CRM reason', async () => {
    const d = door([{ status: 401, body: '{"message":"token revoked"}' }]);
    await expect(http(d, []).call('GET', '/x')).rejects.toMatchObject({
      code: 'crm_unauthorized',
      message: 'TestCRM rejected the credentials (401): token revoked',
    });
    expect(d.calls).toBe(1);
  });

  it('does not retry past its deadline', async () => {
    const d = door([{ status: 503 }]);
    await expect(http(d, [], { deadline: Date.now() + 5 }).call('GET', '/x')).rejects.toMatchObject({
      code: 'crm_timeout',
    });
  });

  it('pauses when the CRM says its window is spent', async () => {
    const slept: number[] = [];
    const d = door([{ status: 200, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' } }]);
    await http(d, slept).call('GET', '/x');
    expect(slept).toEqual([1000]);
  });
});
