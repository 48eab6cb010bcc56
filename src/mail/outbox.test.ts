import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastLink, mailTo } from '../../contract-tests/support/outbox.ts';
import { outboxMailer, toEml } from './outbox.ts';

describe('the .eml outbox', () => {
  it('writes a readable ASCII mail as it is, and anything else as base64 UTF-8', () => {
    const ascii = toEml({ to: 'a@example.eu', subject: 'Hi', text: 'Open http://x.test/a?b=1\nBye' }, 'id1');
    expect(ascii).toContain('Content-Transfer-Encoding: 7bit\r\n\r\nOpen http://x.test/a?b=1\r\nBye');
    const utf8 = toEml({ to: 'a@example.eu', subject: 'Grüße', text: 'Grüße' }, 'id2');
    expect(utf8).toContain('Content-Transfer-Encoding: base64');
    expect(utf8).toContain(`Subject: =?UTF-8?B?${Buffer.from('Grüße').toString('base64')}?=`);
    expect(utf8).toContain(Buffer.from('Grüße').toString('base64'));
  });

  it('keeps a header on one line: no header injection through CR or LF', () => {
    const eml = toEml(
      { to: 'a@example.eu\r\nBcc: victim@example.eu', subject: 'x\nX-Evil: 1', text: '' },
      'id',
    );
    const head = eml.split('\r\n\r\n')[0] ?? '';
    expect(head).not.toMatch(/^Bcc:/m);
    expect(head).not.toMatch(/^X-Evil:/m);
  });

  it('writes one file per mail that the test reader finds again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outbox-test-'));
    try {
      const mailer = outboxMailer(join(dir, 'outbox'));
      const file = await mailer.send({
        to: 'b@example.eu',
        subject: 'Link',
        text: 'Hello,\n\nGo to https://h.test/console/verify?token=vt_1\n\nBye',
      });
      expect(readdirSync(join(dir, 'outbox'))).toEqual([file.split('/').at(-1)]);
      expect(readFileSync(file, 'utf8')).toMatch(/^From: .*\r\nTo: b@example.eu\r\nSubject: Link\r\n/);
      expect(mailTo(join(dir, 'outbox'), 'B@example.eu')).toHaveLength(1);
      expect(lastLink(join(dir, 'outbox'), 'b@example.eu', '/console/verify')).toBe(
        'https://h.test/console/verify?token=vt_1',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
