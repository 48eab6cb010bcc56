// Starts the services on their ports and stops them gracefully: no new connections, open
// streams drained for up to `drainMs`, then the rest closed. In a cluster worker (cluster.ts)
// the services listen on no port: the primary hands each connection over (`accept`).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo, Socket } from 'node:net';
import express, { type Express } from 'express';
import type { Config, ConnectionLimits } from './config.ts';
import { createDirectoryService, type DirectoryMail } from './directory/app.ts';
import { createModelService } from './model/app.ts';
import { openPlatform, type Platform } from './context.ts';
import { startInboundSmtp } from './mail/inbound.ts';
import { createLogger } from './platform/logger.ts';
import { metricsText } from './platform/metrics.ts';
import { type Component, databaseRoundTrip, httpReady, startProber } from './status/status.ts';
import { STATUS_COMPONENTS } from './status/pages.ts';

export type { ServiceName } from './platform/app.ts';
import type { ServiceName } from './platform/app.ts';

/** What a process listens for: the services, the inbound SMTP listener that comes with the directory, the metrics listener. */
export type Listener = ServiceName | 'smtp' | 'metrics';

export interface Running {
  urls: Partial<Record<ServiceName, string>>;
  /** The inbound SMTP listener's port (INBOUND_SMTP_PORT), when it runs. */
  smtpPort?: number;
  /** The metrics listener's URL (METRICS_PORT on METRICS_HOST), when it runs. */
  metricsUrl?: string;
  /** The directory's mail (sending domains, transport, inbound handler), when it runs. */
  mail?: DirectoryMail;
  platform: Platform;
  /** Resolves when every service started is ready (/readyz); rejects if one fails to start. */
  ready: Promise<void>;
  /** Serves a connection accepted elsewhere (the cluster's primary) on this service. */
  accept(service: Listener, socket: Socket): void;
  close(): Promise<void>;
}

export interface StartOptions {
  /** How long open requests and streams may run on after a stop (ms). */
  drainMs?: number;
  /** Listen on no port: connections arrive through `accept` (a cluster worker). */
  handedOver?: boolean;
}

/**
 * A server bounded against slow and greedy clients (slowloris): headers must arrive within
 * `headersTimeoutMs` and the whole request within `requestTimeoutMs` (checked every second, not
 * node's default 30 s), at most `maxConnections` sockets and `maxConnectionsPerIp` from one
 * address (0: no such cap, for instances behind a load balancer), a keep-alive socket serves
 * `maxRequestsPerSocket` requests. Idle keep-alive sockets outlive clients' (undici 4 s, load
 * balancers 60 s): no ECONNRESET.
 */
/** Handles a server's HTTP upgrades (WebSockets); without one, upgrades are refused. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

function boundedServer(app: Express, limits: ConnectionLimits, upgrade?: UpgradeHandler): Server {
  const server = createServer(
    {
      connectionsCheckingInterval: 1000,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: 65_000,
    },
    app,
  );
  server.maxConnections = limits.maxConnections;
  server.maxRequestsPerSocket = limits.maxRequestsPerSocket;
  if (upgrade) server.on('upgrade', upgrade);
  if (limits.maxConnectionsPerIp > 0) {
    const perIp = new Map<string, number>();
    server.on('connection', (socket: Socket) => {
      const ip = socket.remoteAddress ?? '';
      const open = (perIp.get(ip) ?? 0) + 1;
      if (open > limits.maxConnectionsPerIp) {
        socket.destroy();
        return;
      }
      perIp.set(ip, open);
      socket.once('close', () => {
        const left = (perIp.get(ip) ?? 1) - 1;
        if (left > 0) perIp.set(ip, left);
        else perIp.delete(ip);
      });
    });
  }
  return server;
}

function listen(
  app: Express,
  host: string,
  port: number,
  limits: ConnectionLimits,
  upgrade?: UpgradeHandler,
): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = boundedServer(app, limits, upgrade);
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** The URL of `port` on `host` as a client on this machine reaches it. */
function urlOf(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown}:${port}`;
}

/**
 * A server that listens on no port, fed sockets by `accept`. Stopping it closes idle sockets at
 * once and busy ones when their requests are answered, for up to `drainMs`, then every one.
 */
function handedOver(
  app: Express,
  limits: ConnectionLimits,
  upgrade?: UpgradeHandler,
): { accept(socket: Socket): void; drain(drainMs: number): Promise<void> } {
  const server = boundedServer(app, limits, upgrade);
  const busy = new Map<Socket, number>(); // open sockets, with their requests in flight
  let draining = false;
  let drained: (() => void) | undefined;
  const forget = (socket: Socket) => {
    busy.delete(socket);
    if (draining && busy.size === 0) drained?.();
  };
  server.on('request', (req, res) => {
    const socket = req.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (busy.get(socket) ?? 1) - 1;
      if (busy.has(socket)) busy.set(socket, left);
      if (draining && left === 0) socket.destroySoon();
    });
  });
  return {
    accept(socket) {
      // The primary accepted it, so the server's own maxConnections never saw it.
      if (draining || busy.size >= limits.maxConnections) {
        socket.destroy();
        return;
      }
      busy.set(socket, 0);
      socket.once('close', () => forget(socket));
      server.emit('connection', socket);
      socket.resume();
    },
    drain(drainMs) {
      draining = true;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          for (const socket of busy.keys()) socket.destroy();
        }, drainMs);
        drained = () => {
          clearTimeout(timer);
          resolve();
        };
        if (busy.size === 0) drained();
        for (const [socket, inFlight] of busy) if (inFlight === 0) socket.destroySoon();
      });
    },
  };
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
  options: StartOptions = {},
): Promise<Running> {
  const drainMs = options.drainMs ?? 10_000;
  const urls: Running['urls'] = {};
  const accepts: Partial<Record<Listener, (socket: Socket) => void>> = {};
  let smtpPort: number | undefined;
  let directoryMail: DirectoryMail | undefined;
  /** Serves `app` on `port`, or, handed over, on the sockets `accept` receives. */
  const serve = async (
    name: ServiceName,
    app: Express,
    port: number,
    upgrade?: UpgradeHandler,
  ): Promise<() => Promise<void>> => {
    if (options.handedOver) {
      const server = handedOver(app, config.connections, upgrade);
      accepts[name] = server.accept;
      urls[name] = urlOf(config.host, port);
      return () => server.drain(drainMs);
    }
    const server = await listen(app, config.host, port, config.connections, upgrade);
    urls[name] = urlOf(config.host, (server.address() as AddressInfo).port);
    return () => drain(server, drainMs);
  };
  const stops: Array<() => Promise<void>> = [];
  const ready: Promise<void>[] = [];
  const platform: Platform = await openPlatform(
    config,
    createLogger(config.logLevel, 'platform', config.logFormat),
  );
  if (which.includes('model')) {
    const logger = createLogger(config.logLevel, 'model-api', config.logFormat);
    const service = await createModelService(platform, logger, {
      directoryUrl: () => urls.directory ?? urlOf(config.host, config.directoryPort),
      ownUrl: () => urls.model ?? urlOf(config.host, config.modelPort),
    });
    const stop = await serve('model', service.app, config.modelPort, service.upgrade);
    logger.info(
      { url: urls.model, console: `${config.publicModelUrl}/console`, status: `${urls.model}/status` },
      'model API listening; sign up in the console to get a key',
    );
    stops.push(async () => {
      await service.closeSessions();
      await stop();
      await service.close();
    });
  }
  if (which.includes('directory')) {
    const logger = createLogger(config.logLevel, 'directory-api', config.logFormat);
    const service = await createDirectoryService(platform, logger, {
      modelUrl: () => urls.model ?? urlOf(config.host, config.modelPort),
      ownUrl: () => urls.directory ?? urlOf(config.host, config.directoryPort),
    });
    const stop = await serve('directory', service.app, config.directoryPort);
    ready.push(service.ready);
    directoryMail = service.mail;
    logger.info({ url: urls.directory }, 'directory API listening');
    // Replies and bounces to verified sending domains (src/mail/inbound.ts), in every process that
    // runs the directory: in a cluster the primary listens and hands connections over (cluster.ts).
    const mail = config.mail;
    const inbound =
      mail.inboundPort === undefined
        ? undefined
        : await startInboundSmtp({
            port: mail.inboundPort,
            host: config.host,
            hostname: mail.inboundHost,
            isReplyDomain: service.mail.isReplyDomain,
            onMail: service.mail.onMail,
            maxBytes: mail.inboundMaxBytes,
            maxClients: mail.inboundMaxConnections,
            messagesPerMinutePerIp: mail.inboundRatePerMinute,
            tls: mail.inboundTls,
            handedOver: options.handedOver ?? false,
            logger,
          });
    if (inbound) {
      accepts.smtp = inbound.accept;
      smtpPort = options.handedOver ? mail.inboundPort : inbound.port;
      logger.info({ port: smtpPort, mx: mail.inboundHost }, 'inbound SMTP listening');
    }
    stops.push(async () => {
      await inbound?.close();
      await stop();
      await service.close();
    });
  }
  // Prometheus scrapes here: a port of its own, bound to loopback unless METRICS_HOST says otherwise,
  // so the API ports show no metrics to the internet (issue 29, finding 6).
  let metricsUrl: string | undefined;
  if (config.metricsPort !== undefined) {
    const registries = which.map((name) => platform.metrics[name]);
    const scrape = express();
    scrape.disable('x-powered-by');
    scrape.get('/metrics', async (_req, res) => {
      const { contentType, text } = await metricsText(registries);
      res.type(contentType).send(text);
    });
    scrape.use((_req, res) => {
      res.status(404).type('text/plain').send('Only GET /metrics is served here.\n');
    });
    if (options.handedOver) {
      const server = handedOver(scrape, config.connections);
      accepts.metrics = server.accept;
      metricsUrl = urlOf(config.metricsHost, config.metricsPort);
      stops.push(() => server.drain(drainMs));
    } else {
      const server = await listen(scrape, config.metricsHost, config.metricsPort, config.connections);
      metricsUrl = urlOf(config.metricsHost, (server.address() as AddressInfo).port);
      stops.push(() => drain(server, drainMs));
    }
  }
  // The status page's probes: each service this process runs, and storage, every 30 s once ready.
  const allReady = Promise.all(ready).then(() => undefined);
  const probes: Record<string, () => Promise<void>> = { storage: databaseRoundTrip(platform.db) };
  for (const name of which) if (urls[name]) probes[name] = httpReady(urls[name]);
  const components: Component[] = STATUS_COMPONENTS.flatMap((c) => {
    const probe = probes[c.id];
    return probe ? [{ ...c, probe }] : [];
  });
  let prober: { stop(): void } | undefined;
  let closed = false;
  allReady
    .then(() => {
      if (!closed)
        prober = startProber(
          platform.db,
          components,
          createLogger(config.logLevel, 'status', config.logFormat),
        );
    })
    .catch(() => undefined);
  stops.unshift(async () => {
    closed = true;
    prober?.stop();
  });
  return {
    urls,
    ...(smtpPort === undefined ? {} : { smtpPort }),
    ...(metricsUrl === undefined ? {} : { metricsUrl }),
    ...(directoryMail === undefined ? {} : { mail: directoryMail }),
    platform,
    ready: allReady,
    accept(service, socket) {
      const accept = accepts[service];
      if (accept) accept(socket);
      else socket.destroy();
    },
    close: async () => {
      await Promise.all(stops.map((stop) => stop()));
      await platform.close();
    },
  };
}
