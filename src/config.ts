// Every setting comes from the environment; the README has the table.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LogFormat, logFormatOf } from './platform/logger.ts';
import { dailyQuotaOverride, rpmOverride, tpmOverride } from './limits/policies.ts';

/** How long and how many connections a client may hold (src/server.ts applies them). */
export interface ConnectionLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerIp: number;
  maxRequestsPerSocket: number;
}

export interface Config {
  host: string;
  modelPort: number;
  directoryPort: number;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  bootstrapAdminKey: string | undefined;
  logLevel: string;
  /** LOG_FORMAT: `pretty` (human lines, a progress bar) or `json`; unset, pretty on a terminal. */
  logFormat: LogFormat;
  /**
   * MODEL_API_PUBLIC_URL: the model API's address as people reach it (links in the console's
   * mail point to `<it>/console`; its session cookie is Secure when it is https).
   */
  publicModelUrl: string;
  /** MAIL_OUTBOX_DIR: where mail is written as .eml files (src/mail/outbox.ts); DATA_DIR/outbox by default. */
  outboxDir: string;
  /**
   * DIRECTORY_API_URL: where the MCP hub calls the Directory API (with the caller's own key);
   * unset: the directory this process serves, else the local DIRECTORY_API_PORT.
   */
  directoryApiUrl: string | undefined;
  /** MCP_CALL_TIMEOUT_MS: the time one MCP tool call (or listing) may take; 15,000 by default. */
  mcpCallTimeoutMs: number;
  /**
   * MCP_REMOTE_PRIVATE_ADDRESSES: remote MCP servers may be on private, loopback or link-local
   * addresses and plain http (tests, on-premises); false by default.
   */
  mcpRemotePrivateAddresses: boolean;
  /**
   * SECRETS_ENCRYPTION_KEY: 32 bytes (64 hex digits) that encrypt stored secrets (the headers
   * of registered MCP servers) with AES-256-GCM. Unset: a key kept in DATA_DIR/secrets.key
   * (made on first use), or one per process for an in-memory database; with DATABASE_URL it
   * must be set for secrets to be stored.
   */
  secretsKey: Buffer | undefined;
  /** VAT_RATE: the VAT rate of monthly statements, in percent (`21`, `20.5`); `0` by default. */
  vatRate: string;
  /**
   * CORS_ORIGINS: the origins a browser app may call the APIs from with a bearer key, comma-separated
   * (`https://app.example.eu,http://localhost:5173`), or `*` for any (the default, as OpenAI's API).
   */
  corsOrigins: '*' | string[];
  /**
   * HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_IP,
   * MAX_REQUESTS_PER_SOCKET: the bounds of every server's connections.
   */
  connections: ConnectionLimits;
  /** JOB_WORKERS: the most jobs of one queue one instance runs at once; 0 serves HTTP only. 16 by default. */
  jobWorkers: number;
  /**
   * OUTBOUND_ALLOW_PRIVATE: outbound calls (webhooks) may go to loopback, private and link-local
   * addresses and use plain http (tests, on-premises); false by default.
   */
  outboundAllowPrivate: boolean;
  /**
   * WEBHOOK_RETRY_SCHEDULE: the delays of a webhook message's attempts, each after the one before
   * (`0s,5s,5m,30m,2h,5h,10h,14h,20h,24h`, the default: 10 attempts over about 3 days).
   */
  webhookRetryScheduleMs: number[];
  /** WEBHOOK_DISABLE_AFTER: an endpoint whose deliveries all failed for this long is disabled; `5d` by default. */
  webhookDisableAfterMs: number;
  /** WEBHOOK_TIMEOUT_MS: how long a webhook receiver has to answer; 15,000 by default. */
  webhookTimeoutMs: number;
  /** SSE_KEEP_ALIVE_MS: a comment line on a quiet event stream this often; 15,000 by default. */
  sseKeepAliveMs: number;
  /** DATABASE_POOL_SIZE: connections to PostgreSQL per instance; 10 by default. */
  databasePoolSize: number;
  /** DEMO_LISTINGS: listings of the demo directory loaded into an empty database; 20,000 by default. */
  demoListings: number;
  /** PUBLIC_DIRECTORY_URL: the directory API's address as clients reach it (photo URLs); the request's own when unset. */
  publicDirectoryUrl: string | undefined;
  /** The environment the rest was read from, for settings owned by a module (MODEL_ENGINES). */
  env: NodeJS.ProcessEnv;
}

function flag(name: string, env: NodeJS.ProcessEnv): boolean {
  const raw = optional(env[name]);
  if (raw === undefined || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new Error(`${name} must be true or false, not ${JSON.stringify(raw)}`);
}

function secretsKey(env: NodeJS.ProcessEnv): Buffer | undefined {
  const raw = optional(env.SECRETS_ENCRYPTION_KEY);
  if (raw === undefined) return undefined;
  if (!/^[0-9a-fA-F]{64}$/.test(raw)) {
    throw new Error(
      'SECRETS_ENCRYPTION_KEY must be 64 hex digits (32 bytes), e.g. from `openssl rand -hex 32`',
    );
  }
  return Buffer.from(raw, 'hex');
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `500ms`, `5s`, `5m`, `2h`, `5d` in milliseconds. */
function durationMs(name: string, raw: string): number {
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(raw.trim());
  if (!match) {
    throw new Error(
      `${name} takes durations such as 500ms, 5s, 5m, 2h or 5d, not ${JSON.stringify(raw.trim())}`,
    );
  }
  return Number(match[1]) * (UNIT_MS[match[2] ?? 's'] ?? 1000);
}

function retrySchedule(env: NodeJS.ProcessEnv): number[] {
  const raw = optional(env.WEBHOOK_RETRY_SCHEDULE) ?? '0s,5s,5m,30m,2h,5h,10h,14h,20h,24h';
  const delays = raw.split(',').map((item) => durationMs('WEBHOOK_RETRY_SCHEDULE', item));
  if (delays.length < 1 || delays.length > 20) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE takes 1 to 20 delays, not ${delays.length}`);
  }
  return delays;
}

function integer(name: string, fallback: number, min: number, max: number, env: NodeJS.ProcessEnv): number {
  const raw = optional(env[name]);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(raw)}`);
  }
  return value;
}

function port(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new Error(`${name} must be a port number from 0 to 65535, not ${JSON.stringify(raw)}`);
  }
  return value;
}

function optional(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function publicUrl(name: string, fallback: string, env: NodeJS.ProcessEnv): string {
  const raw = optional(env[name]);
  if (raw === undefined) return fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be an http or https URL, not ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`${name} must be an http or https URL, not ${JSON.stringify(raw)}`);
  }
  return url.href.replace(/\/+$/, '');
}

function corsOrigins(env: NodeJS.ProcessEnv): '*' | string[] {
  const raw = optional(env.CORS_ORIGINS)?.trim() ?? '*';
  if (raw === '*') return '*';
  return raw.split(',').map((item) => {
    const origin = item.trim();
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) {
      throw new Error(
        `CORS_ORIGINS must be * or comma-separated origins such as https://app.example.eu (scheme, host and port, no path), not ${JSON.stringify(item)}`,
      );
    }
    return origin;
  });
}

function vatRate(env: NodeJS.ProcessEnv): string {
  const raw = optional(env.VAT_RATE) ?? '0';
  if (!/^(100|[0-9]{1,2})(\.[0-9]{1,2})?$/.test(raw) || Number(raw) > 100) {
    throw new Error(
      `VAT_RATE must be a percentage from 0 to 100 with at most two decimals, not ${JSON.stringify(raw)}`,
    );
  }
  return raw;
}

/**
 * Every environment variable the configuration knows: read here, or handed by it to the module
 * that owns it (the engines, the limits, search, the cluster). The README's table lists exactly
 * these (src/config.test.ts).
 */
export const CONFIG_VARIABLES = [
  'MODEL_API_PORT',
  'DIRECTORY_API_PORT',
  'HOST',
  'DATA_DIR',
  'DATABASE_URL',
  'DATABASE_POOL_SIZE',
  'REDIS_URL',
  'WORKERS',
  'BOOTSTRAP_ADMIN_KEY',
  'CORS_ORIGINS',
  'HEADERS_TIMEOUT_MS',
  'REQUEST_TIMEOUT_MS',
  'MAX_CONNECTIONS',
  'MAX_CONNECTIONS_PER_IP',
  'MAX_REQUESTS_PER_SOCKET',
  'LOG_LEVEL',
  'LOG_FORMAT',
  'MODEL_API_PUBLIC_URL',
  'PUBLIC_DIRECTORY_URL',
  'MAIL_OUTBOX_DIR',
  'DIRECTORY_API_URL',
  'MODEL_ENGINES',
  'SSE_KEEP_ALIVE_MS',
  'MCP_CALL_TIMEOUT_MS',
  'MCP_REMOTE_PRIVATE_ADDRESSES',
  'SECRETS_ENCRYPTION_KEY',
  'JOB_WORKERS',
  'OUTBOUND_ALLOW_PRIVATE',
  'WEBHOOK_RETRY_SCHEDULE',
  'WEBHOOK_DISABLE_AFTER',
  'WEBHOOK_TIMEOUT_MS',
  'VAT_RATE',
  'DEMO_LISTINGS',
  'MODEL_RATE_LIMIT_RPM',
  'MODEL_RATE_LIMIT_TPM',
  'DIRECTORY_RATE_LIMIT_RPS',
  'DIRECTORY_DAILY_QUOTA',
  'SEARCH_CACHE',
  'VECTOR_KERNEL',
] as const;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Read per request by the limiter; a bad value fails here, at start-up.
  rpmOverride(env);
  tpmOverride(env);
  dailyQuotaOverride(env);
  const modelPort = port('MODEL_API_PORT', 8080, env);
  const dataDir = env.DATA_DIR || './data';
  return {
    host: env.HOST || '0.0.0.0',
    modelPort,
    directoryPort: port('DIRECTORY_API_PORT', 8081, env),
    dataDir,
    databaseUrl: optional(env.DATABASE_URL),
    redisUrl: optional(env.REDIS_URL),
    bootstrapAdminKey: optional(env.BOOTSTRAP_ADMIN_KEY),
    logLevel: env.LOG_LEVEL || 'info',
    logFormat: logFormatOf(optional(env.LOG_FORMAT), Boolean(process.stdout.isTTY)),
    outboxDir:
      optional(env.MAIL_OUTBOX_DIR) ??
      (dataDir.startsWith('memory://') ? join(tmpdir(), 'eurus-outbox') : join(dataDir, 'outbox')),
    vatRate: vatRate(env),
    corsOrigins: corsOrigins(env),
    connections: {
      headersTimeoutMs: integer('HEADERS_TIMEOUT_MS', 10_000, 1000, 600_000, env),
      requestTimeoutMs: integer('REQUEST_TIMEOUT_MS', 120_000, 1000, 3_600_000, env),
      maxConnections: integer('MAX_CONNECTIONS', 10_000, 1, 1_000_000, env),
      maxConnectionsPerIp: integer('MAX_CONNECTIONS_PER_IP', 512, 0, 1_000_000, env),
      maxRequestsPerSocket: integer('MAX_REQUESTS_PER_SOCKET', 10_000, 0, 1_000_000_000, env),
    },
    publicModelUrl: publicUrl('MODEL_API_PUBLIC_URL', `http://localhost:${modelPort}`, env),
    directoryApiUrl: optional(env.DIRECTORY_API_URL) && publicUrl('DIRECTORY_API_URL', '', env),
    mcpCallTimeoutMs: integer('MCP_CALL_TIMEOUT_MS', 15_000, 100, 600_000, env),
    mcpRemotePrivateAddresses:
      flag('MCP_REMOTE_PRIVATE_ADDRESSES', env) || flag('OUTBOUND_ALLOW_PRIVATE', env),
    secretsKey: secretsKey(env),
    jobWorkers: integer('JOB_WORKERS', 16, 0, 256, env),
    outboundAllowPrivate: flag('OUTBOUND_ALLOW_PRIVATE', env),
    webhookRetryScheduleMs: retrySchedule(env),
    webhookDisableAfterMs: durationMs('WEBHOOK_DISABLE_AFTER', optional(env.WEBHOOK_DISABLE_AFTER) ?? '5d'),
    webhookTimeoutMs: integer('WEBHOOK_TIMEOUT_MS', 15_000, 100, 600_000, env),
    sseKeepAliveMs: integer('SSE_KEEP_ALIVE_MS', 15_000, 100, 600_000, env),
    databasePoolSize: integer('DATABASE_POOL_SIZE', 10, 1, 1000, env),
    demoListings: integer('DEMO_LISTINGS', 20_000, 0, 10_000_000, env),
    publicDirectoryUrl: optional(env.PUBLIC_DIRECTORY_URL) && publicUrl('PUBLIC_DIRECTORY_URL', '', env),
    env,
  };
}
