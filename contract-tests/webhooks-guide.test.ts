// docs/webhooks.md as an integrator follows it, on the real service: the guide's receivers (the
// one on the `standardwebhooks` library, the one on node:crypto, the Python one) are taken from
// the page as printed and run; an endpoint is registered, its test event arrives and each
// receiver verifies it; a delivery to a receiver that is down shows as failed in the message
// list, and re-sending it delivers it with the same webhook-id. The page's test vector is checked
// with the `standardwebhooks` package.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, until } from './support/client.ts';
import { freePort } from './support/processes.ts';
import { startTestServers, type TestServers } from './support/server.ts';

const GUIDE = readFileSync('docs/webhooks.md', 'utf8');

/** The first fenced block of `lang` after the heading `heading`. */
function block(heading: string, lang: string): string {
  const at = GUIDE.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`docs/webhooks.md has no heading ${heading}`);
  const open = GUIDE.indexOf(`\n\`\`\`${lang}\n`, at);
  const start = open + `\n\`\`\`${lang}\n`.length;
  return GUIDE.slice(start, GUIDE.indexOf('\n```', start) + 1);
}

/** A receiver of the guide, run as a process; its standard output is kept. */
class Receiver {
  out = '';
  #child: ChildProcess | undefined;
  port = 0;
  readonly command: string;
  readonly file: string;
  constructor(command: string, file: string) {
    this.command = command;
    this.file = file;
  }

  async start(secret: string, port?: number): Promise<void> {
    this.port = port ?? (await freePort());
    this.#child = spawn(this.command, [this.file], {
      env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(this.port), PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child.stdout?.on('data', (d: Buffer) => (this.out += d.toString()));
    this.#child.stderr?.on('data', (d: Buffer) => (this.out += d.toString()));
    // listening once a request gets any answer
    const res = await until(
      () => `${this.file} to listen; its output: ${this.out}`,
      () => fetch(this.url, { method: 'POST', body: '{}' }).catch(() => undefined),
      20_000,
    );
    await res.arrayBuffer();
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/eurus/concierge`;
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

describe('docs/webhooks.md, followed on the real service', () => {
  // beside node_modules, so the receivers' imports (express, standardwebhooks) resolve
  const dir = join('.tmp', `webhooks-guide-${process.pid}`);
  let servers: TestServers;
  const call = (method: string, path: string, body?: object) =>
    send(servers.urls.directory!, servers.adminKey, method, path, body);

  beforeAll(async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'receiver.mjs'), block('### Node, with the Standard Webhooks library', 'js'));
    writeFileSync(join(dir, 'webhook-receiver.mjs'), block('### Node (node:crypto)', 'js'));
    writeFileSync(join(dir, 'webhook_receiver.py'), block('### Python', 'python'));
    servers = await startTestServers('pglite', {
      which: ['directory'],
      // the guide's local receivers are plain http on loopback: allowed as an operator allows them;
      // one attempt, so a delivery to a receiver that is down is failed at once
      env: { OUTBOUND_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0s' },
    });
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the test vector holds, by the standardwebhooks package', () => {
    const secret = /With the secret `(whsec_[^`]+)`/.exec(GUIDE)?.[1];
    const id = /`webhook-id: (msg_[^`]+)`/.exec(GUIDE)?.[1];
    const timestamp = /`webhook-timestamp: (\d+)`/.exec(GUIDE)?.[1];
    const signature = /the signature is\s+`(v1,[^`]+)`/.exec(GUIDE)?.[1];
    const body = /A `test` event:\n\n```json\n(.+)\n```/.exec(GUIDE)?.[1];
    expect([secret, id, timestamp, signature, body].every(Boolean)).toBe(true);
    expect(new Webhook(secret!).sign(id!, new Date(Number(timestamp) * 1000), body!)).toBe(signature);
  });

  it('registers an endpoint; the standardwebhooks receiver verifies its test event; a failed delivery is re-sent', async () => {
    const created = await call('POST', '/v1/webhook-endpoints', {
      url: 'http://127.0.0.1:9/placeholder', // changed below, once the receiver has its port
      description: 'Concierge results for the office ERP',
      event_types: ['workflow.completed', 'workflow.failed', 'workflow.cancelled', 'test'],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const secret = created.body.secret as string;
    const receiver = new Receiver(process.execPath, join(dir, 'receiver.mjs'));
    await receiver.start(secret);
    try {
      expect((await call('PATCH', `/v1/webhook-endpoints/${id}`, { url: receiver.url })).status).toBe(200);
      const sent = await call('POST', `/v1/webhook-endpoints/${id}/test`);
      expect(sent.status).toBe(202);
      const message = sent.body.id as string;
      // the receiver's own line: `console.log(event.id, event.type)`
      await until('the receiver to log the event', () => receiver.out.includes(`${message} test`));

      // the receiver is down: the next delivery fails, and the message list shows it
      const port = receiver.port;
      await receiver.stop();
      const lost = (await call('POST', `/v1/webhook-endpoints/${id}/test`)).body.id as string;
      const failed = await until('the failed message', async () => {
        const list = (await call('GET', `/v1/webhook-endpoints/${id}/messages?status=failed`)).body
          .data as Array<{
          id: string;
          attempt_log: Array<{ error: string | null }>;
        }>;
        return list.find((m) => m.id === lost);
      });
      expect(failed.attempt_log[0]?.error).toBe('connection refused');

      // fixed: re-sent by hand, the same message arrives and is verified
      await receiver.start(secret, port);
      const resent = await call('POST', `/v1/webhook-endpoints/${id}/messages/${lost}/resend`);
      expect(resent.status).toBe(202);
      await until('the re-sent event', () => receiver.out.includes(`${lost} test`));
      await until('the message delivered', async () => {
        const list = (await call('GET', `/v1/webhook-endpoints/${id}/messages`)).body.data as Array<{
          id: string;
          status: string;
        }>;
        return list.find((m) => m.id === lost && m.status === 'delivered');
      });
      // a request it cannot verify is refused
      const forged = await fetch(receiver.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': lost,
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': 'v1,bm90IGEgc2lnbmF0dXJlIG9mIG91cnMgYXQgYWxsIQ==',
        },
        body: '{"id":"forged","type":"test","data":{"object":{}}}',
      });
      expect(forged.status).toBe(400);
    } finally {
      await receiver.stop();
    }
  });

  it.each([
    ['the node:crypto receiver', process.execPath, 'webhook-receiver.mjs'],
    ['the Python receiver', 'python3', 'webhook_receiver.py'],
  ])('%s verifies a delivery and refuses a forged one', async (_name, command, file) => {
    const created = await call('POST', '/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/placeholder' });
    const id = created.body.id as string;
    const receiver = new Receiver(command, join(dir, file));
    await receiver.start(created.body.secret as string);
    try {
      await call('PATCH', `/v1/webhook-endpoints/${id}`, { url: receiver.url });
      const message = (await call('POST', `/v1/webhook-endpoints/${id}/test`)).body.id as string;
      await until('the receiver to log the event', () => receiver.out.includes(`test event for ${id}`));
      const delivered = await until('the delivery', async () => {
        const list = (await call('GET', `/v1/webhook-endpoints/${id}/messages`)).body.data as Array<{
          id: string;
          status: string;
          attempt_log: Array<{ status_code: number | null }>;
        }>;
        return list.find((m) => m.id === message && m.status === 'delivered');
      });
      expect(delivered.attempt_log[0]?.status_code).toBe(204);
      const forged = await fetch(receiver.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': message,
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': 'v1,bm90IGEgc2lnbmF0dXJlIG9mIG91cnMgYXQgYWxsIQ==',
        },
        body: '{"id":"forged","type":"test","data":{"object":{"endpoint_id":"forged"}}}',
      });
      expect(forged.status).toBe(401);
      expect(receiver.out).not.toContain('forged');
    } finally {
      await receiver.stop();
    }
  });
});
