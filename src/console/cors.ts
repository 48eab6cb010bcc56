// The console (served by the model API) calls the directory API with its session cookie, across
// origins: it reads the usage (GET /v1/usage) and manages webhook endpoints and their messages
// (/v1/webhook-endpoints...) and sending domains (/v1/sending-domains...). On one host the two services differ by port only (`npm start`:
// :8080 and :8081); in production they are MODEL_API_PUBLIC_URL and the directory's own address.
// CORS with credentials is allowed for those origins alone, on those paths alone: a page of any
// other origin cannot read an answer or send the preflighted requests that change something, and
// the cookie (SameSite=Lax) is never sent cross-site. Changes still need the session's CSRF token.
import type { Request, Response } from 'express';
import { EXPOSED_HEADERS } from '../platform/browser.ts';

/** The paths of the directory API the console calls with its session, and the methods it uses. */
const CONSOLE_PATHS: Array<{ prefix: string; methods: string[] }> = [
  { prefix: '/v1/usage', methods: ['GET'] },
  { prefix: '/v1/webhook-endpoints', methods: ['GET', 'POST', 'PATCH', 'DELETE'] },
  { prefix: '/v1/sending-domains', methods: ['GET', 'POST', 'DELETE'] },
];

/** Loopback names: one machine, one user, as `npm start` serves both services on it. */
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Whether `origin` is the console's: MODEL_API_PUBLIC_URL's origin, or, on a loopback host only
 * (`npm start` on one machine, where the model API's port may be any), a page on the host this
 * request came to. On a host others reach, another port of the same name may be someone else's
 * site: there only MODEL_API_PUBLIC_URL's origin is the console's.
 */
export function isConsoleOrigin(req: Request, origin: string, modelPublicUrl: string): boolean {
  try {
    const from = new URL(origin);
    if (from.origin === new URL(modelPublicUrl).origin) return true;
    const to = new URL(`http://${req.get('host') ?? ''}`).hostname;
    return LOOPBACK.test(to) && from.hostname === to;
  } catch {
    return false;
  }
}

/**
 * Answers CORS for the console's origin on the console's paths (preflights included) and says
 * so; any other request is left to the bearer-key CORS of the platform (never with credentials).
 */
export function consoleCors(modelPublicUrl: string): (req: Request, res: Response) => boolean {
  return (req, res) => {
    const origin = req.get('origin');
    if (!origin) return false;
    const path = CONSOLE_PATHS.find((p) => req.path === p.prefix || req.path.startsWith(`${p.prefix}/`));
    if (!path || !isConsoleOrigin(req, origin, modelPublicUrl)) return false;
    const method = req.method === 'OPTIONS' ? req.get('access-control-request-method') : req.method;
    if (!method || !path.methods.includes(method.toUpperCase())) return false;
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.append('Vary', 'Origin');
    if (req.method === 'OPTIONS') {
      res.setHeader('Access-Control-Allow-Methods', path.methods.join(', '));
      res.setHeader(
        'Access-Control-Allow-Headers',
        'Content-Type, X-CSRF-Token, Idempotency-Key, Eurus-Project',
      );
      res.setHeader('Access-Control-Max-Age', '600');
    } else {
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS.join(', '));
    }
    return true;
  };
}
