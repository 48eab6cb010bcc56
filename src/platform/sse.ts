// The one writer of server-sent events (text/event-stream) for every streaming route: the
// headers (no caching, no proxy buffering), events as JSON, keep-alive comments on a quiet
// stream, and the end. A handler that streams returns SENT: the response validator never sees it.
import type { Response } from 'express';

export interface SseWriter {
  /** One event whose data is `data` as JSON, named by `event:` when `name` is given. */
  send(data: unknown, name?: string): void;
  /** One event whose data is `text` as it is (`[DONE]`). */
  sendRaw(text: string): void;
  /** A keep-alive comment now. */
  keepAlive(): void;
  /** Stops the keep-alives and ends the response (a no-op once ended or closed). */
  end(): void;
  /** Whether the client has gone (or the stream ended). */
  readonly closed: boolean;
}

/**
 * Starts a 200 event stream on `res`. With `keepAliveMs`, a comment goes out whenever nothing
 * was written for that long, so proxies and clients do not time a slow stream out.
 */
export function openSse(res: Response, options: { keepAliveMs?: number } = {}): SseWriter {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  let closed = false;
  let lastWrite = Date.now();
  const write = (text: string) => {
    if (closed) return;
    lastWrite = Date.now();
    res.write(text);
  };
  const every = options.keepAliveMs;
  const timer =
    every === undefined
      ? undefined
      : setInterval(
          () => {
            if (Date.now() - lastWrite >= every) write(': keep-alive\n\n');
          },
          Math.min(every, 1000),
        );
  const stop = () => {
    closed = true;
    clearInterval(timer);
  };
  res.once('close', stop);
  return {
    send: (data, name) =>
      write(`${name === undefined ? '' : `event: ${name}\n`}data: ${JSON.stringify(data)}\n\n`),
    sendRaw: (text) => write(`data: ${text}\n\n`),
    keepAlive: () => write(': keep-alive\n\n'),
    end: () => {
      if (closed) return;
      stop();
      res.end();
    },
    get closed() {
      return closed;
    },
  };
}
