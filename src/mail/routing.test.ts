import { describe, expect, it } from 'vitest';
import type { InboundMail } from './inbound.ts';
import { MailRouting } from './routing.ts';

const mail = (to: string) => ({ recipients: [to] }) as InboundMail;
const isQuote = (m: InboundMail) => m.recipients.some((r) => r.startsWith('q-'));

describe('mail routing', () => {
  it('hands a message to the route that claims it', async () => {
    const routing = new MailRouting();
    const got: string[] = [];
    routing.inbound({ onMail: async (m) => void got.push(`rest ${m.recipients[0]}`) });
    routing.inbound({ owns: isQuote, onMail: async (m) => void got.push(`quote ${m.recipients[0]}`) });
    await routing.onMail(mail('q-abc@reply.example.de'));
    expect(got).toEqual(['quote q-abc@reply.example.de']);
  });

  it('hands a message no route claims to the route without owns', async () => {
    const routing = new MailRouting();
    const got: string[] = [];
    routing.inbound({ owns: isQuote, onMail: async () => void got.push('quote') });
    routing.inbound({ onMail: async () => void got.push('rest') });
    await routing.onMail(mail('r-abc@reply.example.de'));
    expect(got).toEqual(['rest']);
  });

  it('refuses a message with 550 when no route takes it', async () => {
    const routing = new MailRouting();
    routing.inbound({ owns: isQuote, onMail: async () => undefined });
    await expect(routing.onMail(mail('r-abc@reply.example.de'))).rejects.toMatchObject({ responseCode: 550 });
  });

  it('refuses a second route without owns', () => {
    const routing = new MailRouting();
    routing.inbound({ onMail: async () => undefined });
    expect(() => routing.inbound({ onMail: async () => undefined })).toThrow(/only one inbound route/);
  });

  it('asks the opt-out route whose prefix a token has', async () => {
    const routing = new MailRouting();
    const optOut = async () => undefined;
    routing.optOuts('rcp_', async (t) => ({
      email: `campaign ${t}`,
      fromName: 'A',
      fromEmail: 'a@x.de',
      optOut,
    }));
    routing.optOuts('cq_', async (t) => ({
      email: `quote ${t}`,
      fromName: 'B',
      fromEmail: 'b@x.de',
      optOut,
    }));
    expect((await routing.optOutOf('cq_1.abc'))?.email).toBe('quote cq_1.abc');
    expect((await routing.optOutOf('rcp_1.abc'))?.email).toBe('campaign rcp_1.abc');
  });

  it('answers null for a token no route registered', async () => {
    const routing = new MailRouting();
    routing.optOuts('cq_', async () => {
      throw new Error('not this route');
    });
    expect(await routing.optOutOf('xyz_1.abc')).toBeNull();
  });

  it('refuses a prefix that overlaps one registered', () => {
    const routing = new MailRouting();
    routing.optOuts('cq_', async () => null);
    expect(() => routing.optOuts('c', async () => null)).toThrow(/overlap/);
    expect(() => routing.optOuts('cq_x', async () => null)).toThrow(/overlap/);
  });
});
