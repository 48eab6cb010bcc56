// Prometheus metrics of a service (prom-client): its own registry, labelled with the service.
// They are served on the API port only to the operator's METRICS_KEY, and on the metrics
// listener (METRICS_PORT, loopback by default) to whoever reaches it (issue 29, finding 6).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AggregatorRegistry, Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { AuthenticationError } from './errors.ts';

interface OpenApiRequest extends Request {
  openapi?: { openApiRoute?: string };
}

/** A service's registry: process figures and its HTTP requests, labelled `service`. */
export function metricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Counts and times every request into `registry`, by the spec's route. */
export function observeRequests(registry: Registry): RequestHandler {
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration in seconds, until the response finished.',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return (req: Request, res: Response, next: NextFunction) => {
    const end = duration.startTimer();
    res.on('finish', () => {
      const route = (req as OpenApiRequest).openapi?.openApiRoute ?? 'unmatched';
      end({ method: req.method, route });
      requests.inc({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}

/** The exposition of several services' registries as one (their series told apart by `service`). */
export async function metricsText(registries: Registry[]): Promise<{ contentType: string; text: string }> {
  if (registries.length === 1) {
    const [only] = registries as [Registry];
    return { contentType: only.contentType, text: await only.metrics() };
  }
  const merged = AggregatorRegistry.aggregate(await Promise.all(registries.map((r) => r.getMetricsAsJSON())));
  return { contentType: merged.contentType, text: await merged.metrics() };
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** GET /metrics on an API port: the operator's METRICS_KEY as a bearer, else a 401. */
export function keyedMetrics(registry: Registry, key: string): RequestHandler {
  const expected = digest(key);
  return async (req, res) => {
    const given = /^Bearer[ ]+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      throw new AuthenticationError(
        given === undefined ? 'missing_metrics_key' : 'invalid_metrics_key',
        'GET /metrics needs the operator\'s metrics key: "Authorization: Bearer <METRICS_KEY>".',
      );
    }
    const { contentType, text } = await metricsText([registry]);
    res.type(contentType).send(text);
  };
}
