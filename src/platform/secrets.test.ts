// The secrets key kept apart from the data (issue 29, finding 9): SECRETS_KEY_FILE (made on
// first use) or SECRETS_ENCRYPTION_KEY; DATA_DIR/secrets.key only as the first-start default.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.ts';
import { startServices } from '../services/server.ts';
import { secretBox, secretsKeyOf } from './secrets.ts';

const dirs: string[] = [];
const temp = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `eurus-${name}-`));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the secrets key', () => {
  it('with SECRETS_KEY_FILE, is made there (0600) and never beside the data', async () => {
    const data = temp('data');
    const file = join(temp('keys'), 'nested', 'eurus-secrets.key');
    const running = await startServices(
      {
        ...loadConfig({
          DEMO_LISTINGS: '0',
          INBOUND_SMTP_PORT: 'off',
          SECRETS_KEY_FILE: file,
          DATA_DIR: data,
        }),
        host: '127.0.0.1',
        modelPort: 0,
        directoryPort: 0,
        logLevel: 'silent',
      },
      ['model'],
    );
    try {
      expect(running.platform.secrets).toBeDefined();
      const sealed = running.platform.secrets!.seal('hello', 'rec_1');
      expect(existsSync(join(data, 'secrets.key'))).toBe(false);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const again = secretBox(Buffer.from(readFileSync(file, 'utf8').trim(), 'hex'));
      expect(again.open(sealed, 'rec_1')).toBe('hello');
    } finally {
      await running.close();
    }
  });

  it('reads an existing key file, also with DATABASE_URL, and refuses a malformed one', () => {
    const file = join(temp('keys'), 'k');
    writeFileSync(file, `${'ab'.repeat(32)}\n`);
    const got = secretsKeyOf({ key: undefined, file }, { databaseUrl: 'postgres://x', dataDir: './data' });
    expect(got).toEqual({ key: Buffer.from('ab'.repeat(32), 'hex'), source: 'file' });
    writeFileSync(file, 'not a key');
    expect(() => secretsKeyOf({ key: undefined, file }, { databaseUrl: undefined, dataDir: './x' })).toThrow(
      /64 hex digits/,
    );
  });

  it('takes the environment first, and keeps the first-start default in DATA_DIR', () => {
    const env = Buffer.alloc(32, 7);
    expect(
      secretsKeyOf({ key: env, file: undefined }, { databaseUrl: undefined, dataDir: './x' }).source,
    ).toBe('environment');
    const data = temp('data');
    const first = secretsKeyOf(
      { key: undefined, file: undefined },
      { databaseUrl: undefined, dataDir: data },
    );
    expect(first.source).toBe('data_dir');
    expect(existsSync(join(data, 'secrets.key'))).toBe(true);
    expect(() => loadConfig({ SECRETS_ENCRYPTION_KEY: 'ab'.repeat(32), SECRETS_KEY_FILE: '/k' })).toThrow(
      ConfigError,
    );
  });
});
