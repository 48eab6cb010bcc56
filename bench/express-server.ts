// Floors of bench/model.ts: what the framework alone costs, below any work of ours. Express (the
// version we run) with `express.json()` answers POST /v1/chat/completions with the bytes our
// model service answered (read from BENCH_BODY_FILE, as bench/bare-server.ts does). With
// BENCH_VALIDATOR=1 it also runs express-openapi-validator with our model spec (requests and
// responses validated, as in src/platform/app.ts; the bearer check accepts any token): the
// contract enforcement every call of ours pays before our own code runs (with the route
// matchers kept, as ours keeps them: src/platform/route-cache.ts).
// `BENCH_BODY_FILE=... PORT=0 node bench/express-server.ts` prints its port on stdout.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import express from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { cacheRouteMatchers } from '../src/platform/route-cache.ts';

const file = process.env.BENCH_BODY_FILE;
if (!file) throw new Error('BENCH_BODY_FILE is required');
const recorded = JSON.parse(readFileSync(file, 'utf8')) as { json: string; stream: string[] };

const app = express();
app.disable('x-powered-by');
app.use(express.json({ limit: '10mb' }));
if (process.env.BENCH_VALIDATOR === '1') {
  cacheRouteMatchers(); // as src/platform/app.ts does
  app.use(
    OpenApiValidator.middleware({
      apiSpec: JSON.parse(readFileSync('generated/model/openapi.json', 'utf8')) as never, // the bundled spec, as ours
      validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false },
      validateResponses: true,
      validateSecurity: { handlers: { BearerAuth: async () => true } },
      ignoreUndocumented: false,
    }),
  );
}
app.post('/v1/chat/completions', (req, res) => {
  if ((req.body as { stream?: boolean }).stream !== true) {
    // parsed and sent through res.json, as our routes answer (and as the response validator sees it)
    res.status(200).json(JSON.parse(recorded.json));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  for (const event of recorded.stream) res.write(event);
  res.end();
});
app.use(
  (
    err: { status?: number; message?: string },
    _req: express.Request,
    res: express.Response,
    _next: express.NextFunction,
  ) => {
    res.status(err.status ?? 500).json({ error: { message: err.message ?? 'error' } });
  },
);

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
