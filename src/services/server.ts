// Starts the services on their ports and stops them gracefully: no new connections, open
// streams drained for up to `drainMs`, then the rest closed. Every port is bound first of all
// (ports.ts): a taken one stops the start before the database opens. In a cluster worker
// (cluster.ts) the services listen on no port: the primary hands each connection over (`accept`).
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo, Socket } from 'node:net';
import express, { type Express } from 'express';
import type { Config, ConnectionLimits } from '../config.ts';
import type { DirectoryMail } from './directory.ts';
import { openPlatform, type Platform } from './context.ts';
import { startInboundSmtp } from '../mail/inbound.ts';
import { createLogger } from '../platform/logger.ts';
import { metricsText } from '../platform/metrics.ts';
import { outboxMailer } from '../mail/outbox.ts';
import { accountDataParts } from '../privacy/parts.ts';
import { mailErasureReceipt } from '../privacy/receipt.ts';
import { createPrivacyRouter } from '../privacy/routes.ts';
import { Privacy } from '../privacy/service.ts';
import { newRequestId } from '../platform/request-id.ts';
import { startRestCompaction } from '../platform/rest.ts';
import { bindAll, isListenError, type Listener, portError } from '../ports.ts';
import { type Component, startProber } from '../status/status.ts';
import { STATUS_COMPONENTS } from '../status/components.ts';
import { type Probes, withReadiness } from './probes.ts';
import { directoryReadyBanner, firstRunBanner } from './banner.ts';
import { usableDemoCache } from '../demo-cache.ts';
import { type DemoRows, directoryStartsEmpty, startDemoRows } from '../directory/demo-rows.ts';

export type { ServiceName } from '../platform/app.ts';
import type { ServiceName } from '../platform/app.ts';
export type { Listener } from '../ports.ts';

export interface Running {
  urls: Partial<Record<ServiceName, string>>;
  /** The inbound SMTP listener's port (INBOUND_SMTP_PORT), when it runs. */
  smtpPort?: number;
  /** The metrics listener's URL (METRICS_PORT on METRICS_HOST), when it runs. */
  metricsUrl?: string;
  /** The directory's mail (sending domains, transport, where inbound mail goes), when it runs. */
  mail?: DirectoryMail;
  platform: Platform;
  /** The status page's components this process probes, every 30 s once ready (src/status). */
  components: Component[];
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
  /** The demo directory's rows, started before the services were loaded (main.ts). */
  demoRows?: DemoRows | undefined;
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

function boundedServer(app: RequestListener, limits: ConnectionLimits, upgrade?: UpgradeHandler): Server {
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

/** Requests that may wait for their service to exist before it answers 503. */
const MAX_WAITING = 512;

/**
 * A bounded server made before its service (bound early, see ports.ts): requests that arrive
 * meanwhile wait for `serve` (up to MAX_WAITING; more get a 503 to retry), upgrades too.
 */
function earlyServer(
  limits: ConnectionLimits,
  upgradable: boolean,
): { server: Server; serve(app: Express, upgrade?: UpgradeHandler): void } {
  let app: Express | undefined;
  let upgrade: UpgradeHandler | undefined;
  const waiting: Array<() => void> = [];
  const server = boundedServer(
    (req, res) => {
      if (app) return app(req, res);
      if (waiting.length < MAX_WAITING) return void waiting.push(() => app?.(req, res));
      const id = newRequestId();
      res.writeHead(503, {
        'content-type': 'application/json',
        'x-request-id': id,
        'retry-after': '1',
        'retry-after-ms': '1000',
      });
      const message = 'The service is starting; retry in a second.';
      res.end(
        JSON.stringify({
          error: { type: 'overloaded_error', code: 'overloaded', message, param: null, request_id: id },
        }),
      );
    },
    limits,
    upgradable
      ? (req, socket, head) => {
          const go = () => (upgrade ? upgrade(req, socket, head) : socket.destroy());
          if (app) go();
          else if (waiting.length < MAX_WAITING) waiting.push(go);
          else socket.destroy();
        }
      : undefined,
  );
  return {
    server,
    serve(service, upgradeHandler) {
      app = service;
      upgrade = upgradeHandler;
      for (const go of waiting.splice(0)) go();
    },
  };
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
function handedOver(server: Server): { accept(socket: Socket): void; drain(drainMs: number): Promise<void> } {
  const limits = { maxConnections: server.maxConnections };
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
  const host = config.host;
  const handed = options.handedOver ?? false;
  const urls: Running['urls'] = {};
  const accepts: Partial<Record<Listener, (socket: Socket) => void>> = {};
  const ports = { model: config.modelPort, directory: config.directoryPort };

  // Every port first, before anything slow: a taken one is a PortError (ports.ts) at once.
  type Early = ReturnType<typeof earlyServer> & {
    listener: Exclude<Listener, 'smtp'>;
    host: string;
    port: number;
    url?: string;
    drain?: () => Promise<void>;
  };
  const early: Early[] = which.map((name) => ({
    listener: name,
    host,
    port: ports[name],
    ...earlyServer(config.connections, name === 'model'),
  }));
  // Prometheus scrapes a port of its own, bound to loopback unless METRICS_HOST says otherwise,
  // so the API ports show no metrics to the internet (issue 29, finding 6).
  if (config.metricsPort !== undefined) {
    const metrics = { listener: 'metrics' as const, host: config.metricsHost, port: config.metricsPort };
    early.push({ ...metrics, ...earlyServer(config.connections, false) });
  }
  if (!handed) await bindAll(early);
  const stopListening = async () => {
    await Promise.all(early.map((e) => new Promise((resolve) => e.server.close(resolve))));
  };
  for (const e of early) {
    e.url = urlOf(e.host, handed ? e.port : (e.server.address() as AddressInfo).port);
    if (e.listener !== 'metrics') urls[e.listener] = e.url;
    if (handed) {
      const server = handedOver(e.server);
      accepts[e.listener] = server.accept;
      e.drain = () => server.drain(drainMs);
    }
  }
  // Replies and bounces to verified sending domains (src/mail/inbound.ts), in every process that
  // runs the directory: in a cluster the primary listens and hands connections over (cluster.ts).
  // Until the directory exists, recipients get a temporary failure (451) and senders retry.
  let directoryMail: DirectoryMail | undefined;
  const mail = config.mail;
  const starting = () => Promise.reject(new Error('the directory is starting'));
  let inbound: Awaited<ReturnType<typeof startInboundSmtp>> | undefined;
  if (which.includes('directory') && mail.inboundPort !== undefined) {
    const inboundPort = mail.inboundPort;
    inbound = await startInboundSmtp({
      port: inboundPort,
      host,
      hostname: mail.inboundHost,
      isReplyDomain: (domain) => (directoryMail ? directoryMail.isReplyDomain(domain) : starting()),
      onMail: (message) => (directoryMail ? directoryMail.onMail(message) : starting()),
      maxBytes: mail.inboundMaxBytes,
      maxClients: mail.inboundMaxConnections,
      messagesPerMinutePerIp: mail.inboundRatePerMinute,
      tls: mail.inboundTls,
      handedOver: handed,
      logger: createLogger(config.logLevel, 'directory-api', config.logFormat),
    }).catch(async (err: unknown) => {
      await stopListening();
      throw isListenError(err) ? portError('smtp', host, inboundPort, err) : err;
    });
    accepts.smtp = inbound.accept;
  }
  const smtpPort =
    inbound && mail.inboundPort !== undefined ? (handed ? mail.inboundPort : inbound.port) : undefined;

  // A first start fills the directory with demo listings: they are made on a worker thread from
  // now on (main.ts starts it sooner), while the database opens; a start that finds them stored
  // cancels it. A cluster's instances leave it to the one that loads (demo.ts makes them then).
  const demoRows =
    options.demoRows ??
    (!handed && which.includes('directory') && directoryStartsEmpty(config) && !usableDemoCache(config)
      ? startDemoRows(config.demoListings)
      : undefined);

  const stops: Array<() => Promise<void>> = [];
  const probes: Probes = {};
  const ready: Promise<unknown>[] = [];
  let platform: Platform;
  try {
    platform = await openPlatform(config, createLogger(config.logLevel, 'platform', config.logFormat));
  } catch (err) {
    demoRows?.cancel();
    await inbound?.close();
    await stopListening();
    throw err;
  }
  const firstRunSecret = platform.takeFirstRunSecret();
  let bannerShown = false;
  const showBanner = () => {
    if (firstRunSecret === undefined || bannerShown) return;
    bannerShown = true;
    process.stdout.write(firstRunBanner(firstRunSecret, config, urls));
  };
  const drainOf = (name: Early['listener']) => {
    const e = early.find((x) => x.listener === name);
    return () => (e?.drain ? e.drain() : e ? drain(e.server, drainMs) : Promise.resolve());
  };
  const serve = (name: Early['listener'], app: Express, upgrade?: UpgradeHandler) =>
    early.find((x) => x.listener === name)?.serve(app, upgrade);
  // Personal data (src/privacy): its jobs run wherever workers run, its routes on the model API.
  const privacy = new Privacy({
    db: platform.db,
    jobs: platform.jobs,
    parts: accountDataParts(platform.db, config.vatRate, platform.secrets),
    invalidateKey: (keyId) => platform.auth.invalidate(keyId),
    mailReceipt: (to, receipt) => mailErasureReceipt(outboxMailer(config.outboxDir), to, receipt),
    graceMs: config.erasureGraceMs,
    exportLinkTtlMs: config.exportLinkTtlMs,
    retention: config.retention,
    logger: createLogger(config.logLevel, 'privacy', config.logFormat),
  });
  await privacy.start();
  if (which.includes('model')) {
    const logger = createLogger(config.logLevel, 'model-api', config.logFormat);
    // each service's modules load only where it runs (a model API alone holds no search code)
    const { createModelService } = await import('./model.ts');
    const service = await createModelService(platform, logger, {
      directoryUrl: () => urls.directory ?? urlOf(host, config.directoryPort),
      ownUrl: () => urls.model ?? urlOf(host, config.modelPort),
      privacy: createPrivacyRouter({
        privacy,
        db: platform.db,
        publicUrl: () => config.imageUrlBase ?? urls.model ?? urlOf(host, config.modelPort),
      }),
    });
    serve('model', service.app, service.upgrade);
    Object.assign(
      probes,
      withReadiness(platform.outbound, urls.model ?? urlOf(host, config.modelPort), service.probes),
    );
    const stop = drainOf('model');
    logger.info(
      { url: urls.model, console: `${config.publicModelUrl}/console`, status: `${urls.model}/status` },
      'model API listening',
    );
    showBanner();
    stops.push(async () => {
      await service.closeSessions();
      await stop();
      await service.close();
    });
  }
  if (which.includes('directory')) {
    const logger = createLogger(config.logLevel, 'directory-api', config.logFormat);
    const { createDirectoryService } = await import('./directory.ts');
    const service = await createDirectoryService(platform, logger, {
      modelUrl: () => urls.model ?? urlOf(host, config.modelPort),
      ownUrl: () => urls.directory ?? urlOf(host, config.directoryPort),
      ...(demoRows ? { demoRows } : {}),
    });
    serve('directory', service.app);
    Object.assign(
      probes,
      withReadiness(platform.outbound, urls.directory ?? urlOf(host, config.directoryPort), service.probes),
    );
    const stop = drainOf('directory');
    ready.push(service.ready);
    directoryMail = service.mail;
    logger.info({ url: urls.directory }, 'directory API listening');
    showBanner();
    const url = urls.directory ?? '';
    service.ready.then(
      (done) => {
        logger.info({ url, ...done }, 'directory API ready');
        if (firstRunSecret === undefined) return;
        const since = { listings: done.listings, secondsSinceStart: process.uptime() };
        process.stdout.write(directoryReadyBanner(config, url, since));
      },
      () => undefined, // said where it failed
    );
    if (smtpPort !== undefined)
      logger.info({ port: smtpPort, mx: mail.inboundHost }, 'inbound SMTP listening');
    stops.push(async () => {
      await inbound?.close();
      await stop();
      await service.close();
    });
  }
  const metricsUrl = early.find((e) => e.listener === 'metrics')?.url;
  if (metricsUrl !== undefined) {
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
    serve('metrics', scrape);
    stops.push(drainOf('metrics'));
  }
  // The status page's probes: the interfaces of each service this process runs, every 30 s once ready.
  const allReady = Promise.all(ready).then(() => undefined);
  const components: Component[] = STATUS_COMPONENTS.flatMap((c) => {
    const probe = probes[c.id];
    return probe ? [{ ...c, probe }] : [];
  });
  let prober: { stop(): void } | undefined;
  let rest: { stop(): void } | undefined;
  let closed = false;
  allReady
    .then(() => {
      if (closed) return;
      prober = startProber(
        platform.db,
        components,
        createLogger(config.logLevel, 'status', config.logFormat),
      );
      rest = startRestCompaction(createLogger(config.logLevel, 'memory', config.logFormat));
    })
    .catch(() => undefined);
  stops.unshift(async () => {
    closed = true;
    prober?.stop();
    rest?.stop();
  });
  return {
    urls,
    ...(smtpPort === undefined ? {} : { smtpPort }),
    ...(metricsUrl === undefined ? {} : { metricsUrl }),
    ...(directoryMail === undefined ? {} : { mail: directoryMail }),
    platform,
    components,
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
