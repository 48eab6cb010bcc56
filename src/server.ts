// Starts the services on their ports and stops them gracefully: no new connections, open
// streams drained for up to `drainMs`, then the rest closed.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Config } from './config.ts';
import { createDirectoryService } from './directory/app.ts';
import { createModelService } from './model/app.ts';
import { openPlatform, type Platform } from './platform/context.ts';
import { createLogger } from './platform/logger.ts';

export type ServiceName = 'model' | 'directory';

export interface Running {
  urls: Partial<Record<ServiceName, string>>;
  platform: Platform;
  close(): Promise<void>;
}

function listen(app: Express, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(server)));
    // Idle keep-alive connections stay open longer than clients keep theirs (undici 4 s, load
    // balancers 60 s), so a client never reuses a socket the server is closing (ECONNRESET).
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.once('error', reject);
  });
}

function urlOf(server: Server, host: string): string {
  const { port } = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown}:${port}`;
}

function drain(server: Server, drainMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), drainMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

export async function startServices(
  config: Config,
  which: ServiceName[] = ['model', 'directory'],
  drainMs = 10_000,
): Promise<Running> {
  const urls: Running['urls'] = {};
  const stops: Array<() => Promise<void>> = [];
  const platform: Platform = await openPlatform(config, createLogger(config.logLevel, 'platform'));
  if (which.includes('model')) {
    const logger = createLogger(config.logLevel, 'model-api');
    const service = await createModelService(platform, logger);
    const server = await listen(service.app, config.host, config.modelPort);
    urls.model = urlOf(server, config.host);
    logger.info({ url: urls.model }, 'model API listening');
    stops.push(async () => {
      await drain(server, drainMs);
      await service.close();
    });
  }
  if (which.includes('directory')) {
    const logger = createLogger(config.logLevel, 'directory-api');
    const service = await createDirectoryService(platform, logger);
    const server = await listen(service.app, config.host, config.directoryPort);
    urls.directory = urlOf(server, config.host);
    logger.info({ url: urls.directory }, 'directory API listening');
    stops.push(async () => {
      await drain(server, drainMs);
      await service.close();
    });
  }
  return {
    urls,
    platform,
    close: async () => {
      await Promise.all(stops.map((stop) => stop()));
      await platform.close();
    },
  };
}
