// The opt-out token of a campaign recipient: its id and 16 bytes of HMAC-SHA256 under a key of
// its own derived from the secrets key, so a link cannot be guessed or forged, and a server
// recognises it without storing it.
import { timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../platform/secrets.ts';

const PURPOSE = 'campaign unsubscribe';
const TOKEN = /^(rcp_[0-9A-Za-z]{26})\.([A-Za-z0-9_-]{22})$/;

function signature(box: SecretBox, recipientId: string): Buffer {
  return box.mac(PURPOSE, recipientId).subarray(0, 16);
}

export function unsubscribeToken(box: SecretBox | undefined, recipientId: string): string {
  if (box === undefined) throw new Error('no secrets key to sign opt-out links with');
  return `${recipientId}.${signature(box, recipientId).toString('base64url')}`;
}

/** The recipient id of a genuine token, else null. */
export function recipientOfToken(box: SecretBox | undefined, token: string): string | null {
  const match = TOKEN.exec(token);
  if (!match || box === undefined) return null;
  const [, recipientId, mac] = match as unknown as [string, string, string];
  // compared as text: base64url's last character carries spare bits, so bytes alone would let
  // several spellings of one signature pass
  const given = Buffer.from(mac);
  const expected = Buffer.from(signature(box, recipientId).toString('base64url'));
  return given.length === expected.length && timingSafeEqual(given, expected) ? recipientId : null;
}
