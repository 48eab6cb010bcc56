// Regression: the data folder the service made was 0755 and 969 of PGlite's files 0666
// (pg_hba.conf among them): anyone on the machine could read the database, the outbox's mail and
// the usage records. Now the folder is 0700 and every file in it 0600, whoever made it (PGlite,
// the outbox, the usage journal, secrets.key), on the first start and after a restart that finds
// wider modes left by anything else.
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { startServices } from '../src/services/server.ts';

const ADMIN = 'sk_test_private_files_admin_0123456789';
const scratch = mkdtempSync(join(tmpdir(), 'private-files-'));
const dataDir = join(scratch, 'data'); // made by the service
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Every path under `dir` (itself included) whose mode is not 0700 (folders) or 0600 (files). */
function wider(dir: string): string[] {
  const stat = lstatSync(dir);
  const mode = stat.mode & 0o777;
  const own = mode !== (stat.isDirectory() ? 0o700 : 0o600) ? [`${mode.toString(8)} ${dir}`] : [];
  if (!stat.isDirectory()) return own;
  return [...own, ...readdirSync(dir).flatMap((name) => wider(join(dir, name)))];
}

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' });
}

async function run(work: (model: string) => Promise<void>): Promise<void> {
  const config = {
    ...loadConfig({ DATA_DIR: dataDir, DEMO_LISTINGS: '20', INBOUND_SMTP_PORT: 'off' }),
    host: '127.0.0.1',
    modelPort: 0,
    directoryPort: 0,
    logLevel: 'silent',
    bootstrapAdminKey: ADMIN,
  };
  const running = await startServices(config, ['model', 'directory'], { drainMs: 100 });
  try {
    await running.ready;
    await work(running.urls.model ?? '');
  } finally {
    await running.close();
  }
}

const post = (url: string, body: unknown, auth = true) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${ADMIN}` } : {}) },
    body: JSON.stringify(body),
  });

describe('the data folder is private', () => {
  it('is 0700 with every file 0600 after a first start that wrote mail and usage', async () => {
    await run(async (model) => {
      // a sign-up mails a verification link to the outbox; a chat call is journalled for billing
      expect(
        (
          await post(
            `${model}/v1/sign-ups`,
            { email: 'ada@example.eu', password: 'correct horse battery staple 9' },
            false,
          )
        ).status,
      ).toBe(202);
      const chat = await post(`${model}/v1/chat/completions`, {
        model: 'prince',
        messages: [{ role: 'user', content: 'hello' }],
      });
      expect(chat.status).toBe(200);
    });
    const written = files(dataDir);
    expect(written).toContain('secrets.key');
    expect(written).toContain('PG_VERSION');
    expect(written.some((f) => f.startsWith('outbox/') && f.endsWith('.eml'))).toBe(true);
    expect(written.some((f) => f.startsWith('usage-journal'))).toBe(true);
    expect(wider(dataDir)).toEqual([]);
  }, 300_000); // a first start on disk: PGlite's initdb, on a busy machine

  it('narrows modes that something else widened, at the next start', async () => {
    chmodSync(dataDir, 0o755);
    chmodSync(join(dataDir, 'secrets.key'), 0o644);
    chmodSync(join(dataDir, 'pg_hba.conf'), 0o666);
    chmodSync(join(dataDir, 'base'), 0o777);
    const outbox = join(dataDir, 'outbox');
    chmodSync(outbox, 0o755);
    for (const mail of readdirSync(outbox)) chmodSync(join(outbox, mail), 0o644);
    await run(async () => {});
    expect(wider(dataDir)).toEqual([]);
  }, 300_000);
});
