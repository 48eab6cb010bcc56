import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import { createRealtime } from '../model/realtime.ts';
import { createAccountsRouter } from '../accounts/routes.ts';
import { rateLimit } from '../limits/middleware.ts';
import { modelRequestBucket } from '../limits/policies.ts';
import { createServiceApp, readSpec } from '../platform/app.ts';
import { createConversationsRouter } from '../agents/conversations-routes.ts';
import { createResponsesRouter, type ResponsesDeps, startBackgroundResponses } from '../agents/routes.ts';
import type { HubDeps } from '../mcp/tools.ts';
import { hubConnector } from '../mcp/connector.ts';
import { McpServerStore } from '../mcp/registry.ts';
import { createMcpServersRouter } from '../mcp/servers-routes.ts';
import { createMcpRouter } from '../mcp/hub-routes.ts';
import { createChatRouter } from '../model/chat-routes.ts';
import { createEngines, createMediaEngines } from '../model/engines/select.ts';
import { createImagesRouter } from '../model/images-routes.ts';
import { createAudioRouter } from '../model/audio-routes.ts';
import { speechEncoders } from '../media/audio/speech-formats.ts';
import { MediaStore } from '../media/store.ts';
import { createEmbeddingsRouter, DEFAULT_EMBEDDING_MODEL } from '../model/embeddings-routes.ts';
import { createModelsRouter } from '../model/models-routes.ts';
import type { Platform } from './context.ts';
import { idempotency } from '../platform/idempotency.ts';
import type { Logger } from '../platform/logger.ts';
import type { createPrivacyRouter } from '../privacy/routes.ts';
import { type ModelOperationId, serves } from '../platform/route.ts';
import { createModelUsageRouter } from '../usage/routes.ts';
import { createConsolePages } from '../console/pages.ts';
import { createPlansRouter } from '../console/plans-routes.ts';
import { createConsoleRouter } from '../console/routes.ts';
import { createSessionHandler } from '../console/session.ts';
import { ConsoleStore } from '../console/store.ts';
import { outboxMailer } from '../mail/outbox.ts';
import { createIncidentsRouter, createStatusRouter } from '../status/routes.ts';
import { createLimitsRouter } from '../limits/routes.ts';
import { createStatusPages } from '../status/pages.ts';
import { modelProbes, type Probes } from './probes.ts';

export interface ModelService {
  app: Express;
  /** Handles the HTTP upgrades of the server (the realtime WebSocket at /v1/realtime). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Ends the open WebSocket sessions (before the HTTP server drains, which they would hold up). */
  closeSessions(): Promise<void>;
  /** The status page's probes of its interfaces (probes.ts). */
  probes: Probes;
  close(): Promise<void>;
}

export interface ModelServiceOptions {
  /** Where the MCP hub reaches the Directory API (DIRECTORY_API_URL, else the directory of this process). */
  directoryUrl?: () => string;
  /** The address this service listens on: image URLs' origin without MODEL_API_PUBLIC_URL. */
  ownUrl?: () => string;
  /** The account-data routes (/v1/account, src/privacy), composed above the features. */
  privacy: ReturnType<typeof createPrivacyRouter>;
}

export async function createModelService(
  platform: Platform,
  logger: Logger,
  options: ModelServiceOptions,
): Promise<ModelService> {
  const config = platform.config;
  const directoryUrl = (): string =>
    config.directoryApiUrl ?? options.directoryUrl?.() ?? `http://127.0.0.1:${config.directoryPort}`;
  // upstreams are the operator's addresses, called through the one outbound guard
  const engines = createEngines(platform.config.engines, platform.outbound);
  const media = createMediaEngines(config.mediaEngines, platform.outbound, {
    recognizerModelDir: config.recognizerModelDir,
    imageWorkers: config.imageWorkers,
  });
  const encoders = speechEncoders();
  logger.info(
    { engines: { ...engines.describe(), ...media.describe() }, speech_formats: encoders.available },
    'model engines',
  );
  const limits = rateLimit(platform.limiter, (req, principal) => {
    const body = req.body as { model?: unknown } | undefined;
    const model =
      typeof body?.model === 'string'
        ? body.model
        : req.path === '/v1/embeddings'
          ? DEFAULT_EMBEDDING_MODEL
          : 'all';
    return {
      key: `model:${principal.keyId}:${model}`,
      buckets: [modelRequestBucket(principal, platform.config.limits)],
      what: model === 'all' ? 'this key' : `model '${model}'`,
    };
  });
  const consoleStore = new ConsoleStore(platform.db, platform.accounts);
  const hub: HubDeps = {
    registry: new McpServerStore(platform.db, platform.secrets, config.mcpRemotePrivateAddresses),
    directoryUrl,
    timeoutMs: config.mcpCallTimeoutMs,
    allowPrivate: config.mcpRemotePrivateAddresses,
    logger,
  };
  const responses: ResponsesDeps = {
    db: platform.db,
    limiter: platform.limiter,
    limits: platform.config.limits,
    engineFor: (model) => engines(model),
    logger,
    mcp: hubConnector(hub),
    mcpCallTimeoutMs: config.mcpCallTimeoutMs,
    keepAliveMs: config.sseKeepAliveMs,
    jobs: platform.jobs,
    secrets: platform.secrets,
  };
  await startBackgroundResponses(responses);
  const app = createServiceApp({
    name: 'model',
    spec: readSpec('model'),
    metrics: { registry: platform.metrics.model, key: platform.config.metricsKey },
    docsPath: 'docs/reference/model.html',
    corsOrigins: platform.config.corsOrigins,
    logger,
    securityHandler: platform.auth.handler,
    otherSecurityHandlers: { SessionCookie: createSessionHandler(consoleStore, platform.accounts) },
    pages: [
      createConsolePages({
        directoryApi: () => {
          if (config.directoryApiUrl) return config.directoryApiUrl;
          const url = options.directoryUrl?.();
          return url ? `:${new URL(url).port}` : undefined;
        },
        publicModelUrl: platform.config.publicModelUrl,
      }),
      createStatusPages(platform.db),
    ],
    middleware: [limits, idempotency(platform.db, readSpec('model'))],
    routers: serves<ModelOperationId>()(
      createModelsRouter({ ...engines.describe(), ...media.describe() }),
      createChatRouter({
        db: platform.db,
        limiter: platform.limiter,
        limits: platform.config.limits,
        engineFor: (model) => engines(model as Parameters<typeof engines>[0]),
        logger,
        keepAliveMs: config.sseKeepAliveMs,
      }),
      createResponsesRouter(responses),
      createConversationsRouter(responses.db),
      createMcpRouter(hub, { origins: config.mcpAllowedOrigins, hosts: config.mcpAllowedHosts }),
      createMcpServersRouter(hub.registry),
      createEmbeddingsRouter({
        db: platform.db,
        limiter: platform.limiter,
        limits: platform.config.limits,
        engineFor: (model) => engines(model),
        logger,
      }),
      createImagesRouter({
        db: platform.db,
        limiter: platform.limiter,
        limits: platform.config.limits,
        engine: media.image,
        store: new MediaStore(platform.db),
        logger,
        publicUrl: () => config.imageUrlBase ?? options.ownUrl?.() ?? `http://127.0.0.1:${config.modelPort}`,
      }),
      createAudioRouter({
        db: platform.db,
        limiter: platform.limiter,
        limits: platform.config.limits,
        engine: media.voice,
        encoders,
        logger,
      }),
      createAccountsRouter(platform.accounts, platform.auth),
      createModelUsageRouter(platform.db, {
        project: (accountId, id) => platform.accounts.getProject(accountId, id),
        key: (accountId, id) => platform.accounts.getKey(accountId, id),
      }),
      createIncidentsRouter(platform.db, (accountId) => platform.accounts.isOperator(accountId)),
      createStatusRouter(platform.db),
      createLimitsRouter({
        db: platform.db,
        settings: platform.config.limits,
        planOf: (accountId) => platform.accounts.planOf(accountId),
        isOperator: (accountId) => platform.accounts.isOperator(accountId),
        changed: (accountId) => platform.auth.invalidateAccount(accountId),
      }),
      createPlansRouter({ db: platform.db, auth: platform.auth, vatRate: platform.config.vatRate }),
      createConsoleRouter({
        store: consoleStore,
        limiter: platform.limiter,
        mailer: outboxMailer(platform.config.outboxDir),
        consoleUrl: `${platform.config.publicModelUrl}/console`,
      }),
      options.privacy,
    ),
    isReady: () => platform.readiness(true),
  });
  const realtime = createRealtime({
    db: platform.db,
    auth: platform.auth,
    revocations: platform.bus,
    limiter: platform.limiter,
    limits: platform.config.limits,
    voice: media.voice,
    chatEngine: () => engines('queen'),
    logger,
    maxSeconds: config.realtimeMaxSeconds,
  });
  return {
    app,
    upgrade: (req, socket, head) => realtime.upgrade(req, socket, head),
    closeSessions: () => realtime.close(),
    probes: modelProbes({ engines, media, jobs: platform.jobs }),
    close: async () => {
      await realtime.close();
      engines.close();
      media.close();
    },
  };
}
