import type { Express } from 'express';
import type { Config } from '../config.ts';
import { createServiceApp } from '../platform/app.ts';
import type { Logger } from '../platform/logger.ts';

export interface DirectoryService {
  app: Express;
  close(): Promise<void>;
}

export async function createDirectoryService(_config: Config, logger: Logger): Promise<DirectoryService> {
  const app = createServiceApp({
    name: 'directory',
    specPath: 'generated/directory/openapi.json',
    docsPath: 'docs/reference/directory.html',
    logger,
    routers: [],
    isReady: () => true,
  });
  return { app, close: async () => {} };
}
