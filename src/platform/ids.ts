// Opaque, prefixed, time-ordered ids: a prefix, then 26 Crockford base32 characters (48 bits
// of milliseconds, 80 random bits), as ULIDs are. Sorting by id sorts by creation.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

// Random bytes are drawn from the CSPRNG 4 KiB at a time and handed out once each: one call
// to OpenSSL per ~400 ids instead of one per id (a few microseconds each, on every request).
const POOL_SIZE = 4096;
let pool: Buffer = Buffer.alloc(0);
let poolOffset = 0;

/** `size` fresh cryptographically random bytes (a copy, never handed out twice). */
export function pooledRandomBytes(size: number): Buffer {
  if (size > POOL_SIZE) return randomBytes(size);
  if (poolOffset + size > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const out = Buffer.from(pool.subarray(poolOffset, poolOffset + size));
  poolOffset += size;
  return out;
}

let lastTime = 0;
let lastRandom: Buffer = Buffer.alloc(10);

function encode(time: number, random: Buffer): string {
  let out = '';
  let t = time;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  let bits = 0;
  let value = 0;
  for (const byte of random) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out;
}

/** A new id such as `key_01JD8W3V6Q2M4T7Y9ZBC5XEFGH`; ids made in the same millisecond still ascend. */
export function newId(prefix: string, now = Date.now()): string {
  if (now <= lastTime) {
    // monotonic within a millisecond: increment the random part
    const next = Buffer.from(lastRandom);
    for (let i = next.length - 1; i >= 0; i--) {
      next[i] = ((next[i] ?? 0) + 1) & 0xff;
      if (next[i] !== 0) break;
    }
    lastRandom = next;
    return `${prefix}_${encode(lastTime, next)}`;
  }
  lastTime = now;
  lastRandom = pooledRandomBytes(10);
  return `${prefix}_${encode(now, lastRandom)}`;
}
