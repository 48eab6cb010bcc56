import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { secretBox } from '../platform/secrets.ts';
import { recipientOfToken, unsubscribeToken } from './opt-out-tokens.ts';

describe('opt-out tokens', () => {
  const box = secretBox(randomBytes(32));
  const id = 'rcp_01JDV0M6P3W7Q8C2X5Z9B4N1TA';

  it('name their recipient when genuine', () => {
    const token = unsubscribeToken(box, id);
    expect(token).toMatch(/^rcp_[0-9A-Za-z]{26}\.[A-Za-z0-9_-]{22}$/);
    expect(recipientOfToken(box, token)).toBe(id);
  });

  it('refuse a changed signature, another recipient, another key and junk', () => {
    const token = unsubscribeToken(box, id);
    // the last character carries two spare bits: a spelling that differs only there is refused too
    const last = String.fromCharCode(token.charCodeAt(token.length - 1) ^ 1);
    expect(recipientOfToken(box, token.slice(0, -1) + last)).toBeNull();
    const dot = token.indexOf('.') + 1;
    const first = token[dot] === 'A' ? 'B' : 'A';
    expect(recipientOfToken(box, token.slice(0, dot) + first + token.slice(dot + 1))).toBeNull();
    expect(recipientOfToken(box, token.replace(id, 'rcp_01JDV0M6P3W7Q8C2X5Z9B4N1TB'))).toBeNull();
    expect(recipientOfToken(secretBox(randomBytes(32)), token)).toBeNull();
    expect(recipientOfToken(box, 'rcp_x.y')).toBeNull();
    expect(recipientOfToken(undefined, token)).toBeNull();
  });
});
