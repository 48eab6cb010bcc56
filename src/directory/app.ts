import type { Express } from 'express';
import { rateLimit } from '../limits/middleware.ts';
import { directoryBuckets } from '../limits/policies.ts';
import { createServiceApp, readSpec } from '../platform/app.ts';
import type { Platform } from '../platform/context.ts';
import { idempotency } from '../platform/idempotency.ts';
import type { Logger } from '../platform/logger.ts';
import { createUsageRouter } from '../usage/routes.ts';

export interface DirectoryService {
  app: Express;
  close(): Promise<void>;
}

export async function createDirectoryService(platform: Platform, logger: Logger): Promise<DirectoryService> {
  const limits = rateLimit(platform.limiter, (_req, principal) => ({
    key: `directory:${principal.keyId}`,
    buckets: directoryBuckets(principal.plan),
    what: 'this key',
  }));
  const app = createServiceApp({
    name: 'directory',
    spec: readSpec('directory'),
    docsPath: 'docs/reference/directory.html',
    logger,
    securityHandler: platform.auth.handler,
    middleware: [limits, idempotency(platform.db, readSpec('directory'))],
    routers: [createUsageRouter(platform.db, 'directory')],
    isReady: () => true,
  });
  return { app, close: async () => {} };
}
