import type { Express } from 'express';
import type { Config } from '../config.ts';
import { createServiceApp } from '../platform/app.ts';
import type { Logger } from '../platform/logger.ts';

export interface ModelService {
  app: Express;
  close(): Promise<void>;
}

export async function createModelService(_config: Config, logger: Logger): Promise<ModelService> {
  const app = createServiceApp({
    name: 'model',
    specPath: 'generated/model/openapi.json',
    docsPath: 'docs/reference/model.html',
    logger,
    routers: [],
    isReady: () => true,
  });
  return { app, close: async () => {} };
}
