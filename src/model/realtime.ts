// GET /v1/realtime?model=voice: the OpenAI Realtime API over a WebSocket (the `ws` library),
// described in spec/model/realtime.asyncapi.yaml. The key is checked at the upgrade (an
// `Authorization: Bearer` header, or the `openai-insecure-api-key.<key>` subprotocol browsers
// use); audio in is 24 kHz 16-bit mono PCM in base64 (`input_audio_buffer.append`), committed
// (`input_audio_buffer.commit`) and transcribed by the voice engine; `response.create` answers
// with the default text model (queen) and speaks the answer (`response.output_audio.delta`).
// Billed per second of audio in and out (voice) and the answer's tokens (queen); bounded in
// time (REALTIME_MAX_SECONDS), message size, buffered audio and conversation length.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { modelRequestBucket } from '../limits/policies.ts';
import { ApiError } from '../platform/errors.ts';
import { MAX_MESSAGE_BYTES, type RealtimeDeps } from './realtime-config.ts';
import { Session } from './realtime-session.ts';

/** Writes an HTTP error in the envelope on a socket whose upgrade is refused, and closes it. */
function refuse(socket: Duplex, error: ApiError, requestId: string): void {
  const body = JSON.stringify(error.body(requestId));
  const reason =
    {
      400: 'Bad Request',
      401: 'Unauthorized',
      403: 'Forbidden',
      404: 'Not Found',
      429: 'Too Many Requests',
      503: 'Service Unavailable',
    }[error.status] ?? 'Error';
  const headers = {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    'x-request-id': requestId,
    Connection: 'close',
    ...error.headers,
  };
  socket.end(
    `HTTP/1.1 ${error.status} ${reason}\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n${body}`,
  );
}

/** The secret of an upgrade: the bearer header, else the subprotocol the OpenAI browser SDK sends. */
export function secretOf(req: IncomingMessage): string {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!match?.[1])
      throw new ApiError(
        401,
        'invalid_authorization_header',
        'The Authorization header must be `Bearer <secret>`.',
      );
    return match[1];
  }
  const protocols = String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim());
  const keyed = protocols.find((p) => p.startsWith('openai-insecure-api-key.'));
  if (keyed !== undefined) return keyed.slice('openai-insecure-api-key.'.length);
  throw new ApiError(
    401,
    'missing_api_key',
    'No API key was sent. Send it as `Authorization: Bearer <secret>` or as the subprotocol `openai-insecure-api-key.<secret>`.',
  );
}

export interface Realtime {
  /** Handles an HTTP upgrade; answers 404 for any path but /v1/realtime. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): Promise<void>;
}

export function createRealtime(deps: RealtimeDeps): Realtime {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_MESSAGE_BYTES,
    perMessageDeflate: false,
    handleProtocols: (protocols) => (protocols.has('realtime') ? 'realtime' : false),
  });
  // the open sessions by key id: a key revoked (or rotated) on any instance re-checks its sessions
  const byKey = new Map<string, Set<Session>>();
  deps.revocations.subscribe((keyId) => {
    for (const session of byKey.get(keyId) ?? []) void session.recheck();
  });
  const track = (session: Session, keyId: string) => {
    let sessions = byKey.get(keyId);
    if (sessions === undefined) byKey.set(keyId, (sessions = new Set()));
    sessions.add(session);
    return () => {
      sessions.delete(session);
      if (sessions.size === 0) byKey.delete(keyId);
    };
  };
  return {
    upgrade(req, socket, head) {
      const requestId = `req_${randomBytes(8).toString('hex')}`;
      socket.on('error', () => {});
      void (async () => {
        try {
          const url = new URL(req.url ?? '/', 'http://localhost');
          if (url.pathname !== '/v1/realtime')
            throw new ApiError(
              404,
              'not_found',
              `No WebSocket at ${url.pathname}; the realtime API is at /v1/realtime?model=voice.`,
            );
          const model = url.searchParams.get('model');
          if (model !== 'voice') {
            throw new ApiError(
              400,
              model === null ? 'missing_model' : 'model_not_supported',
              `The realtime API serves the model voice: connect to /v1/realtime?model=voice${model === null ? '' : `, not ${model}`}.`,
              { param: 'model' },
            );
          }
          const secret = secretOf(req);
          const principal = await deps.auth.principalOf(secret, ['voice'], 'GET /v1/realtime');
          const limited = await deps.limiter.take(`model:${principal.keyId}:voice`, [
            modelRequestBucket(principal, deps.limits),
          ]);
          if (!limited.ok) {
            const seconds = Math.max(1, Math.ceil(limited.retryAfterMs / 1000));
            throw new ApiError(
              429,
              'rate_limit_exceeded',
              `Rate limit reached for model 'voice'; retry in ${seconds} s.`,
              {
                headers: { 'Retry-After': String(seconds), 'retry-after-ms': String(limited.retryAfterMs) },
              },
            );
          }
          if (!deps.voice.recognitionAvailable || !deps.voice.speechAvailable) {
            throw new ApiError(
              503,
              'engine_unavailable',
              'The realtime voice engine (speech and recognition) is not installed on this server.',
              {
                headers: { 'Retry-After': '60', 'retry-after-ms': '60000' },
              },
            );
          }
          wss.handleUpgrade(req, socket, head, (ws) => {
            const session = new Session(ws, principal, secret, deps, requestId);
            const untrack = track(session, principal.keyId);
            ws.once('close', untrack);
            session.start();
          });
        } catch (err) {
          const error =
            err instanceof ApiError
              ? err
              : new ApiError(500, 'internal_error', 'An unexpected error occurred.');
          if (!(err instanceof ApiError))
            deps.logger.error({ err, request_id: requestId }, 'realtime upgrade failed');
          refuse(socket, error, requestId);
        }
      })();
    },
    async close() {
      for (const client of wss.clients) client.close(1001, 'The server is shutting down.');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
