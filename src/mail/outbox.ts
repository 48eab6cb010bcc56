// The .eml outbox: on the embedded default every mail is written as an RFC 5322 message (.eml)
// into DATA_DIR/outbox (MAIL_OUTBOX_DIR), one file per mail, named so that a directory listing
// sorts by time: a person or a test reads it there. Nothing is sent over the network by it. The
// console's own mail (verification links) is composed here (`toEml`); campaign mail is composed
// and DKIM-signed by transport.ts and written here as it would have gone out (`writeToOutbox`).
import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { PRIVATE_DIR, PRIVATE_FILE } from '../platform/private.ts';
import { join } from 'node:path';

export interface Mail {
  to: string;
  subject: string;
  /** Plain text body (UTF-8). */
  text: string;
  from?: string;
}

export interface Mailer {
  /** Hands the mail over; resolves to where it went (the .eml file for the outbox). */
  send(mail: Mail): Promise<string>;
}

export const DEFAULT_FROM = 'Eurus console <no-reply@console.eurus.eu>';

/** A header value safe on one line: no CR/LF (header injection), non-ASCII as RFC 2047 words. */
function headerValue(value: string): string {
  const line = value.replace(/[\r\n]+/g, ' ');
  return /^[\x20-\x7e]*$/.test(line) ? line : `=?UTF-8?B?${Buffer.from(line, 'utf8').toString('base64')}?=`;
}

/**
 * The mail as RFC 5322 text with CRLF line ends. A body of short ASCII lines is sent as it is
 * (7bit: a person reads the link with `cat`); any other body as base64 UTF-8.
 */
export function toEml(mail: Mail, id: string, date = new Date()): string {
  const lines = mail.text.split(/\r?\n/);
  const plain = /^[\x20-\x7e\r\n\t]*$/.test(mail.text) && lines.every((line) => line.length <= 998);
  const body = plain
    ? lines.join('\r\n')
    : Buffer.from(mail.text, 'utf8').toString('base64').replace(/.{76}/g, '$&\r\n');
  return [
    `From: ${headerValue(mail.from ?? DEFAULT_FROM)}`,
    `To: ${headerValue(mail.to)}`,
    `Subject: ${headerValue(mail.subject)}`,
    `Date: ${date.toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: <${id}@console.eurus.eu>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    `Content-Transfer-Encoding: ${plain ? '7bit' : 'base64'}`,
    '',
    body,
    '',
  ].join('\r\n');
}

const fileId = () => `${Date.now()}-${randomBytes(6).toString('hex')}`;

async function writeAtomically(dir: string, id: string, raw: string | Buffer): Promise<string> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
  const file = join(dir, `${id}.eml`);
  await writeFile(`${file}.tmp`, raw, { mode: PRIVATE_FILE });
  await rename(`${file}.tmp`, file);
  return file;
}

/** Writes a composed message as `<dir>/<unix ms>-<random>.eml`, atomically; resolves to the file. */
export function writeToOutbox(dir: string, raw: string | Buffer): Promise<string> {
  return writeAtomically(dir, fileId(), raw);
}

/** Writes each mail as `<dir>/<unix ms>-<random>.eml`, atomically (a reader never sees half). */
export function outboxMailer(dir: string): Mailer {
  return {
    async send(mail) {
      const id = fileId();
      return writeAtomically(dir, id, toEml(mail, id));
    },
  };
}
