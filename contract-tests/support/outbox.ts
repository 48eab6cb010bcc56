// Reads the mail the services wrote to the .eml outbox (src/mail/outbox.ts), as a person would.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ReadMail {
  to: string;
  subject: string;
  text: string;
}

function parse(raw: string): ReadMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = split < 0 ? raw : raw.slice(0, split);
  const body = split < 0 ? '' : raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'mi').exec(head)?.[1]?.trim() ?? '';
  const text = /base64/i.test(header('Content-Transfer-Encoding'))
    ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
    : body;
  return { to: header('To'), subject: header('Subject'), text };
}

/** Every mail in the outbox to `to`, oldest first. */
export function mailTo(dir: string, to: string): ReadMail[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.eml'));
  } catch {
    return [];
  }
  return files
    .sort()
    .map((f) => parse(readFileSync(join(dir, f), 'utf8')))
    .filter((m) => m.to.toLowerCase() === to.toLowerCase());
}

/** The last link in the newest mail to `to` whose URL contains `path`. */
export function lastLink(dir: string, to: string, path: string): string {
  const mails = mailTo(dir, to);
  for (const mail of mails.reverse()) {
    const links = mail.text.match(/https?:\/\/\S+/g) ?? [];
    const link = links.reverse().find((l) => l.includes(path));
    if (link) return link;
  }
  throw new Error(`no mail to ${to} with a link to ${path} in ${dir}`);
}
