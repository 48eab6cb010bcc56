// API key secrets: `sk_` and 48 base62 characters (285 bits) from the CSPRNG. Stored only as
// SHA-256: with that much entropy a slow hash adds nothing, and a hash is an indexed lookup.
import { hash, randomInt, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function mintSecret(): string {
  let out = 'sk_';
  for (let i = 0; i < 48; i++) out += BASE62[randomInt(62)];
  return out;
}

// one-shot: every authenticated call hashes its key, and a Hash object per call cost twice as much
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** `sk_...a1b2`: all that is ever shown again of a secret. */
export function previewOf(secret: string): string {
  return `sk_...${secret.slice(-4)}`;
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
