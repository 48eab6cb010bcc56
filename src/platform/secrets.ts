// Secrets at rest (the headers of registered MCP servers): AES-256-GCM with a random IV, the
// record's id as associated data, so a ciphertext copied to another row does not decrypt.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PRIVATE_DIR, PRIVATE_FILE } from './private.ts';

export interface SecretBox {
  seal(plain: string, id: string): string;
  open(sealed: string, id: string): string;
  /**
   * HMAC-SHA256 of `data` under a key of its own for `purpose` (HKDF from the secrets key), for
   * tokens a server must recognise without storing them (signed links).
   */
  mac(purpose: string, data: string): Buffer;
}

/** Where the key came from: `data_dir` is the default that a backup of the data also holds. */
export type SecretsKeySource = 'environment' | 'file' | 'data_dir' | 'process' | 'none';

/** Reads a key file, making it (0600, 32 random bytes as hex) when it does not exist yet. */
function keyFromFile(file: string): Buffer {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR });
    writeFileSync(file, randomBytes(32).toString('hex'), { flag: 'wx', mode: PRIVATE_FILE });
  }
  chmodSync(file, PRIVATE_FILE);
  const hex = readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    throw new Error(
      `the secrets key file ${file} must hold 64 hex digits (32 bytes), e.g. from \`openssl rand -hex 32\``,
    );
  }
  return Buffer.from(hex, 'hex');
}

/**
 * The key: SECRETS_ENCRYPTION_KEY, else SECRETS_KEY_FILE (made once), else DATA_DIR/secrets.key
 * (made once: a first start works, but a backup of DATA_DIR then holds the key with the data),
 * else one per process for memory://.
 */
export function secretsKeyOf(
  configured: { key: Buffer | undefined; file: string | undefined },
  storage: { databaseUrl: string | undefined; dataDir: string },
): { key: Buffer | undefined; source: SecretsKeySource } {
  if (configured.key !== undefined) return { key: configured.key, source: 'environment' };
  if (configured.file !== undefined) return { key: keyFromFile(configured.file), source: 'file' };
  if (storage.databaseUrl !== undefined) return { key: undefined, source: 'none' };
  if (storage.dataDir.startsWith('memory://')) return { key: randomBytes(32), source: 'process' };
  return { key: keyFromFile(join(storage.dataDir, 'secrets.key')), source: 'data_dir' };
}

export function secretBox(key: Buffer): SecretBox {
  const macKeys = new Map<string, Buffer>();
  return {
    mac(purpose, data) {
      let macKey = macKeys.get(purpose);
      if (macKey === undefined) {
        macKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `eurus mac: ${purpose}`, 32));
        macKeys.set(purpose, macKey);
      }
      return createHmac('sha256', macKey).update(data).digest();
    },
    seal(plain, id) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(id));
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [
        'v1',
        iv.toString('base64'),
        cipher.getAuthTag().toString('base64'),
        data.toString('base64'),
      ].join('.');
    },
    open(sealed, id) {
      const [version, iv, tag, data] = sealed.split('.');
      if (version !== 'v1' || iv === undefined || tag === undefined || data === undefined) {
        throw new Error('not a sealed secret');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      decipher.setAAD(Buffer.from(id));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}
