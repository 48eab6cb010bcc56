// What a first-class JSON API sends browsers: headers that stop sniffing, framing and referrer
// leaks on every response, `Cache-Control: no-store` on every API answer (each is one caller's
// data, keys' secrets among them), and CORS for bearer-token calls from browser apps, as
// OpenAI's API allows them: preflights answered, origins configurable (CORS_ORIGINS), never
// credentials, so a page on another origin can never ride on a console session cookie.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import cors from 'cors';

/** Response headers a browser app may read: the request id, limits and retry advice, paging. */
export const EXPOSED_HEADERS = [
  'x-request-id',
  'RateLimit',
  'RateLimit-Policy',
  // the same numbers under OpenAI's names (src/limits/middleware.ts)
  ...['requests', 'tokens'].flatMap((b) =>
    ['limit', 'remaining', 'reset'].map((k) => `x-ratelimit-${k}-${b}`),
  ),
  'Retry-After',
  'retry-after-ms',
  'x-should-retry',
  'Link',
  'Location',
];

export function securityHeaders(req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  if (req.path.startsWith('/v1/')) res.setHeader('Cache-Control', 'no-store');
  next();
}

/**
 * CORS for `/v1/`: a preflight is answered 204 with the methods and the very headers the
 * browser asks for (the OpenAI SDK sends its own `x-stainless-*` ones), cached for 10 minutes.
 */
export function corsFor(origins: '*' | string[]): RequestHandler {
  const handler = cors({
    origin: origins === '*' ? '*' : origins,
    methods: ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'],
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
  // what `cors` sets on an actual (not preflight) request from any origin, set without it: its
  // per-call header lists were most of what CORS cost a call
  const exposed = EXPOSED_HEADERS.join(',');
  const anyOrigin = (res: Response) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', exposed);
  };
  return (req, res, next) => {
    if (!req.path.startsWith('/v1/')) return next();
    if (origins !== '*' || req.method === 'OPTIONS') return handler(req, res, next);
    anyOrigin(res);
    next();
  };
}
