// Console passwords: checked for strength with zxcvbn-ts (the maintained TypeScript port of
// Dropbox's zxcvbn: common passwords, dictionary words, keyboard walks, repeats, the user's own
// email), and stored as scrypt hashes from node:crypto (built into Node, OpenSSL's scrypt; no
// native addon), each with its own 16-byte salt and its parameters, so they can be raised later
// without breaking stored hashes: `scrypt$N$r$p$salt$hash` (salt and hash base64url).
import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { adjacencyGraphs, dictionary } from '@zxcvbn-ts/language-common';
import { BadRequestError } from '../platform/errors.ts';

/** N = 2^15, r = 8, p = 1: 32 MiB and about 0.1 s a hash, OWASP's scrypt floor or above. */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
const MIN_LENGTH = 10;
const MIN_SCORE = 3;

function scrypt(password: string, salt: Buffer, N: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(
      password.normalize('NFC'),
      salt,
      KEY_LENGTH,
      { N, r, p, maxmem: 256 * N * r + 1024 * 1024 },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, PARAMS.N, PARAMS.r, PARAMS.p);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scrypt(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

let decoy: Promise<string> | undefined;

/** A hash of no one's password: unknown addresses are checked against it, so they take as long. */
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(18).toString('base64url'));
  return decoy;
}

let zxcvbn: ZxcvbnFactory | undefined;

const WARNINGS: Record<string, string> = {
  common: 'it is one of the most common passwords',
  similarToCommon: 'it is very close to a common password',
  userInputs: 'it contains your email address',
  straightRow: 'it is a row of keys',
  keyPattern: 'it is a keyboard pattern',
  simpleRepeat: 'it repeats characters',
  extendedRepeat: 'it repeats a pattern',
  sequences: 'it is a sequence like abc or 123',
  recentYears: 'it contains a recent year',
  dates: 'it contains a date',
  topTen: 'it is one of the ten most common passwords',
  topHundred: 'it is one of the hundred most common passwords',
  wordByItself: 'it is a single word',
  namesByThemselves: 'it is a name',
  commonNames: 'it is a common name',
};

/** Throws 400 `weak_password`, saying why, unless the password is long and hard to guess. */
export function checkStrength(password: string, email: string): void {
  if ([...password].length < MIN_LENGTH) {
    throw new BadRequestError(
      'weak_password',
      `The password must have at least ${MIN_LENGTH} characters; a few unrelated words make a strong one.`,
      { param: 'password' },
    );
  }
  zxcvbn ??= new ZxcvbnFactory({ dictionary: { ...dictionary }, graphs: adjacencyGraphs });
  const result = zxcvbn.check(password, [email, ...email.split(/[@.+_-]/)]);
  if (result.score < MIN_SCORE) {
    const why = WARNINGS[result.feedback.warning ?? ''] ?? 'it would be guessed quickly';
    throw new BadRequestError(
      'weak_password',
      `The password is too easy to guess: ${why}. Add more unrelated words or characters.`,
      { param: 'password' },
    );
  }
}
