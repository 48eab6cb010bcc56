// `npm run mail:sink`: an SMTP server on 127.0.0.1 (port 1025 unless `--port N`) that accepts
// every message, keeps it as a .eml file under `./data/sink/` and prints who it is from and to,
// its subject, Reply-To and Message-ID: the providers' mailboxes when you try the Concierge or a
// campaign on one machine (docs/concierge.md). Start the services with
// `SMTP_URL=smtp://127.0.0.1:1025`. Stop it with Ctrl-C.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

const at = process.argv.indexOf('--port');
const port = at > 0 ? Number(process.argv[at + 1]) : 1025;
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error('usage: npm run mail:sink [-- --port N]');
  process.exit(2);
}
const dir = join('data', 'sink');
mkdirSync(dir, { recursive: true });
let count = 0;
const server = new SMTPServer({
  logger: false,
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  disableReverseLookup: true,
  size: 25 * 1024 * 1024,
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const recipients = session.envelope.rcptTo.map((r) => r.address).join(', ');
    stream.once('end', () => {
      const raw = Buffer.concat(chunks);
      const file = join(dir, `${Date.now()}-${++count}.eml`);
      writeFileSync(file, raw);
      void simpleParser(raw).then((mail) => {
        console.log(
          [
            `${file}`,
            `  to:         ${recipients}`,
            `  from:       ${mail.from?.text ?? ''}`,
            `  reply-to:   ${mail.replyTo?.text ?? ''}`,
            `  subject:    ${mail.subject ?? ''}`,
            `  message-id: ${mail.messageId ?? ''}`,
          ].join('\n'),
        );
      });
      callback(null, '2.0.0 kept by the sink');
    });
  },
});
server.listen(port, '127.0.0.1', () => console.log(`SMTP sink on 127.0.0.1:${port}, messages in ${dir}/`));
