// Standard Webhooks v1 signatures: `whsec_` + base64 of 32 random bytes as the secret; each
// signature `v1,` + base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`)), the key being the
// secret's bytes after the prefix. Tests verify them with the `standardwebhooks` package.
import { createHmac, randomBytes } from 'node:crypto';

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` header: one signature per secret in use (two while one is rotated out). */
export function signatureHeader(secrets: string[], id: string, timestamp: number, body: string): string {
  return secrets.map((secret) => signature(secret, id, timestamp, body)).join(' ');
}
