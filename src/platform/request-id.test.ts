// A request's log lines carry its id: the error handler logs through req.log, the request's child logger.
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { errorHandler } from './error-handler.ts';
import { installRequestLogger, requestId } from './request-id.ts';

describe('the request logger', () => {
  it("logs a failed request's error with the id the client sent", async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: 'info' }, sink);
    const app = express();
    app.use(requestId);
    installRequestLogger(app, logger);
    app.get('/boom', () => {
      throw new Error('boom');
    });
    app.use(errorHandler(logger));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/boom`, {
        headers: { 'x-request-id': 'req_from_client' },
      });
      expect(res.status).toBe(500);
      expect(res.headers.get('x-request-id')).toBe('req_from_client');
    } finally {
      server.close();
    }
    expect(lines).toHaveLength(1); // no access log, the error alone
    expect(lines[0]).toMatchObject({
      request_id: 'req_from_client',
      msg: 'request failed',
      method: 'GET',
      path: '/boom',
    });
    expect((lines[0]!.err as { message: string }).message).toBe('boom');
  });
});
