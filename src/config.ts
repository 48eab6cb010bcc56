// Every setting comes from the environment, and only here: one zod schema reads and validates
// every variable (a bad value stops the start with exit code 2, naming the variable and what it
// may be); the rest of the code takes the typed Config. The README has the table
// (src/config.test.ts checks it against CONFIG_VARIABLES).
import { isIP } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { LimitSettings } from './limits/policies.ts';
import {
  type EnginesConfig,
  loadEnginesConfig,
  loadMediaEnginesConfig,
  type MediaEnginesConfig,
} from './model/engines/select.ts';
import { type LogFormat, logFormatOf } from './platform/logger.ts';

/** Outgoing and incoming mail, and the DNS look-ups of sending domains (src/mail/). */
export interface MailConfig {
  /** SMTP_URL: the relay or MTA campaign mail goes to (smtp:// or smtps://, credentials in the URL); unset: the .eml outbox. */
  smtpUrl: string | undefined;
  /** SMTP_MAX_CONNECTIONS: pooled connections to SMTP_URL per instance; 5 by default. */
  smtpMaxConnections: number;
  /** SMTP_TIMEOUT_MS: connecting to the relay, its greeting and each answer; 30,000 by default. */
  smtpTimeoutMs: number;
  /** INBOUND_SMTP_PORT: the inbound SMTP listener's port, 2525 by default; `off` (undefined): no listener. */
  inboundPort: number | undefined;
  /** INBOUND_MAIL_HOST: the host the reply subdomains' MX records name (and our SMTP greeting). */
  inboundHost: string;
  /** INBOUND_SMTP_MAX_BYTES: the largest message accepted (552 above); 25 MB by default. */
  inboundMaxBytes: number;
  /** INBOUND_SMTP_MAX_CONNECTIONS: open inbound SMTP connections per instance (421 above); 200 by default. */
  inboundMaxConnections: number;
  /** INBOUND_SMTP_RATE_PER_MINUTE: messages one client address may send a minute (451 above); 600 by default. */
  inboundRatePerMinute: number;
  /** INBOUND_SMTP_TLS_CERT and INBOUND_SMTP_TLS_KEY: PEM files; STARTTLS is offered only with both. */
  inboundTls: { certFile: string; keyFile: string } | undefined;
  /** MAIL_SPF_INCLUDE: the domain the SPF record to publish includes (the relay's); INBOUND_MAIL_HOST by default. */
  spfInclude: string;
  /** DNS_SERVERS: the resolvers sending domains are verified through (`ip`, `ip:port`, `[ipv6]:port`); the system's when empty. */
  dnsServers: string[];
}

/** How long what is stored about accounts is kept (src/privacy/, docs/privacy.md), in ms. */
export interface RetentionConfig {
  /** RETENTION_STORED_RESPONSES: stored responses of /v1/responses; 30 days by default. */
  storedResponsesMs: number;
  /** RETENTION_WEBHOOK_MESSAGES: webhook messages with their attempts; 90 days by default. */
  webhookMessagesMs: number;
  /** RETENTION_INBOUND_MAIL: replies to campaigns (their text and sender); 180 days by default. */
  inboundMailMs: number;
  /** RETENTION_CONCIERGE_MAIL: providers' answers read by the concierge; 180 days by default. */
  conciergeMailMs: number;
  /** RETENTION_REQUEST_LOGS: each call's usage record before it is rolled into daily sums; 14 days by default. */
  requestLogsMs: number;
  /** RETENTION_USAGE_DETAIL: daily sums per key and project before they become per account; 400 days by default. */
  usageDetailMs: number;
}

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
   * USAGE_JOURNAL_DIR: where billed calls' usage records wait for the database, so none is lost
   * when the process dies (src/platform/metering.ts); DATA_DIR/usage-journal by default, none
   * (records awaited in the database) with `off` or an in-memory DATA_DIR.
   */
  usageJournalDir: string | undefined;
  /**
   * DIRECTORY_API_URL: where the MCP hub calls the Directory API (with the caller's own key);
   * unset: the directory this process serves, else the local DIRECTORY_API_PORT.
   */
  directoryApiUrl: string | undefined;
  /**
   * MODEL_API_URL: where the concierge calls the Model API's agents runtime (with the platform's
   * own key); unset: the model API this process serves, else the local MODEL_API_PORT.
   */
  modelApiUrl: string | undefined;
  /** MCP_CALL_TIMEOUT_MS: the time one MCP tool call (or listing) may take; 15,000 by default. */
  mcpCallTimeoutMs: number;
  /**
   * MCP_ALLOWED_ORIGINS: the `Origin`s a browser may call the MCP hub from (the transport spec's
   * DNS-rebinding rule); the origin of MODEL_API_PUBLIC_URL by default; `*` for any. A request
   * without `Origin` (a server-side client) is always served.
   */
  mcpAllowedOrigins: '*' | string[];
  /**
   * MCP_ALLOWED_HOSTS: the `Host`s (`name` or `name:port`) the MCP hub answers to, besides
   * loopback names; the host of MODEL_API_PUBLIC_URL by default; `*` for any.
   */
  mcpAllowedHosts: '*' | string[];
  /**
   * MCP_REMOTE_PRIVATE_ADDRESSES: remote MCP servers may be on private, loopback or link-local
   * addresses and plain http (tests, on-premises); false by default.
   */
  mcpRemotePrivateAddresses: boolean;
  /**
   * SECRETS_ENCRYPTION_KEY: 32 bytes (64 hex digits) that encrypt stored secrets (the headers
   * of registered MCP servers) with AES-256-GCM. Unset: a key kept in DATA_DIR/secrets.key
   * (made on first use), or one per process for an in-memory database; with DATABASE_URL it
   * (or SECRETS_KEY_FILE) must be set for secrets to be stored.
   */
  secretsKey: Buffer | undefined;
  /**
   * SECRETS_KEY_FILE: a file holding the key as 64 hex digits (a mounted secret, a volume apart
   * from the data), made on first use when missing; instead of DATA_DIR/secrets.key.
   */
  secretsKeyFile: string | undefined;
  /** VAT_RATE: the VAT rate of monthly statements, in percent (`21`, `20.5`); `0` by default. */
  vatRate: string;
  /**
   * CURRENCY_RATES and CURRENCY_RATES_DATE: what one unit of each currency is worth in euros on
   * a reference day the operator names (`PLN=0.2351,CZK=0.0397`, `2026-12-01`: the ECB's rates of
   * that day, say), for the concierge to compare quotes in other currencies; the lev's fixed rate
   * (1 EUR = 1.95583 BGN) is known without it.
   */
  currencyRates: { rates: Record<string, string>; date: string | null };
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
  /**
   * METRICS_KEY: the operator's bearer secret for `GET /metrics` on the API ports; unset, the API
   * ports serve no metrics.
   */
  metricsKey: string | undefined;
  /** METRICS_PORT: a listener for `GET /metrics` alone (Prometheus), on METRICS_HOST; `off` (undefined) by default. */
  metricsPort: number | undefined;
  /** METRICS_HOST: the address the metrics listener binds; 127.0.0.1 (loopback only) by default. */
  metricsHost: string;
  /** JOB_WORKERS: the most jobs of one queue one instance runs at once; 0 serves HTTP only. 16 by default. */
  jobWorkers: number;
  /**
   * OUTBOUND_ALLOW_PRIVATE: outbound calls (webhooks) may go to loopback, private and link-local
   * addresses and use plain http (tests, on-premises); false by default.
   */
  outboundAllowPrivate: boolean;
  /**
   * OUTBOUND_DNS_SERVERS: the resolvers the outbound guard asks for the addresses customers give
   * (webhook endpoints, CRM base URLs), when saved and when each call connects; the system's when empty.
   */
  outboundDnsServers: string[];
  /**
   * WEBHOOK_RETRY_SCHEDULE: the delays of a webhook message's attempts, each after the one before
   * (`0s,5s,5m,30m,2h,5h,10h,14h,20h,24h`, the default: 10 attempts over about 3 days).
   */
  webhookRetryScheduleMs: number[];
  /** WEBHOOK_DISABLE_AFTER: an endpoint whose deliveries all failed for this long is disabled; `5d` by default. */
  webhookDisableAfterMs: number;
  /** WEBHOOK_TIMEOUT_MS: how long a webhook receiver has to answer; 15,000 by default. */
  webhookTimeoutMs: number;
  /** CRM_CHECK_TIMEOUT_MS: how long a CRM has to accept new credentials (the check call); 10,000 by default. */
  crmCheckTimeoutMs: number;
  /** SSE_KEEP_ALIVE_MS: a comment line on a quiet event stream this often; 15,000 by default. */
  sseKeepAliveMs: number;
  /** DATABASE_POOL_SIZE: connections to PostgreSQL per instance; 10 by default. */
  databasePoolSize: number;
  /** DEMO_LISTINGS: listings of the demo directory loaded into an empty database; 20,000 by default. */
  demoListings: number;
  /**
   * CAMPAIGN_DAY_SECONDS: the length of a day in campaign follow-up delays (`delay_days`), in
   * seconds; 86,400 by default. Tests shorten it to see a follow-up go out.
   */
  campaignDaySeconds: number;
  /** PUBLIC_DIRECTORY_URL: the directory API's address as clients reach it (photo URLs); the listening address when unset. */
  publicDirectoryUrl: string | undefined;
  /** MODEL_ENGINES: the engine behind each text model (src/model/engines/select.ts). */
  engines: EnginesConfig;
  /** MODEL_ENGINES' `imagine` and `voice`: built in unless an upstream is named. */
  mediaEngines: MediaEnginesConfig;
  /** MODEL_API_PUBLIC_URL when it is set: the origin of generated images' URLs (else the listening address, never the request's Host). */
  imageUrlBase: string | undefined;
  /** IMAGE_WORKERS: threads of one process that paint images (built-in imagine engine); 2 by default. */
  imageWorkers: number;
  /** POCKETSPHINX_MODEL_DIR: the built-in recognizer's model (Debian's pocketsphinx-en-us by default). */
  recognizerModelDir: string | undefined;
  /** REALTIME_MAX_SECONDS: the longest a realtime voice session may stay open; 1,800 by default. */
  realtimeMaxSeconds: number;
  /**
   * MODEL_RATE_LIMIT_RPM, MODEL_RATE_LIMIT_TPM, MODEL_IMAGES_PER_MINUTE,
   * MODEL_AUDIO_SECONDS_PER_MINUTE, DIRECTORY_RATE_LIMIT_RPS, DIRECTORY_DAILY_QUOTA: what replaces
   * the plans' limits (tests, fuzzing); unset in production.
   */
  limits: LimitSettings;
  /** WORKERS: instances (threads of one process) sharing the ports (src/cluster.ts); `auto`, one per core; 1 by default. */
  workers: number;
  /** SEARCH_CACHE: `off` keeps no search results (the benchmark's cold figures); `on` by default. */
  searchCache: boolean;
  /** VECTOR_KERNEL: `js` ranks vectors on the plain loop instead of the WebAssembly SIMD kernel. */
  vectorKernel: 'wasm' | 'js' | undefined;
  /**
   * SEARCH_INDEX_SNAPSHOT: the file the search index is read from at start-up and written to
   * after its load (src/directory/memory-index/snapshot.ts); DATA_DIR/search-index.snapshot by
   * default, none with `off` or an in-memory DATA_DIR.
   */
  searchSnapshot: string | undefined;
  /** SMTP_URL, INBOUND_SMTP_*, INBOUND_MAIL_HOST, MAIL_SPF_INCLUDE, DNS_SERVERS: mail (src/mail/). */
  mail: MailConfig;
  /** ERASURE_GRACE_PERIOD: how long an account's erasure waits and can be cancelled; 3 days by default. */
  erasureGraceMs: number;
  /** EXPORT_LINK_TTL: how long an export's download link works (the archive goes then); 24 hours by default. */
  exportLinkTtlMs: number;
  retention: RetentionConfig;
}

/** What a variable was set to that its schema refused: its name, what it may be, the value. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d{1,9})(ms|s|m|h|d)$/;
const DURATIONS = 'durations such as 500ms, 5s, 5m, 2h or 5d';

/** `500ms`, `5s`, `5m`, `2h`, `5d` in milliseconds. */
const duration = z
  .string()
  .trim()
  .regex(DURATION)
  .transform((raw) => {
    const [, amount, unit] = DURATION.exec(raw) ?? [];
    return Number(amount) * (UNIT_MS[unit ?? 's'] ?? 1000);
  });

const integer = (min: number, max: number, fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(min)
    .max(max)
    .default(fallback)
    .describe(`must be an integer from ${min} to ${max}`);

const wholeNumber = z.coerce
  .number()
  .int()
  .min(1)
  .optional()
  .describe('must be a whole number of at least 1');

const flag = z
  .enum(['true', 'false', '1', '0'])
  .optional()
  .transform((raw) => raw === 'true' || raw === '1')
  .describe('must be true or false');

const port = (fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(fallback)
    .describe('must be a port number from 0 to 65535');

const httpUrl = z
  .url({ protocol: /^https?$/ })
  .transform((raw) => new URL(raw).href.replace(/(?<!\/)\/+$/, ''))
  .optional()
  .describe('must be an http or https URL');

const origin = z
  .string()
  .trim()
  .refine((raw) => {
    try {
      const url = new URL(raw);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === raw;
    } catch {
      return false;
    }
  });

const hostname = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/)
  .optional()
  .describe('must be a host name such as mx.example.eu');

/** `1.1.1.1`, `127.0.0.1:5353`, `::1`, `[::1]:53`: what node's resolver takes. */
const dnsServer = z
  .string()
  .trim()
  .refine((server) => {
    const match =
      /^(?:\[([0-9a-f:.]+)\]|([0-9.]+))(?::(\d{1,5}))?$/i.exec(server) ?? /^([0-9a-f:]+)$/i.exec(server);
    const ip = match?.[1] ?? match?.[2];
    const port = match?.[3] === undefined ? 53 : Number(match[3]);
    return ip !== undefined && isIP(ip) !== 0 && port >= 1 && port <= 65535;
  });

/**
 * The schema of the environment: each variable, what it may be (its description, said when a
 * value is refused) and its default. An empty value is an unset one.
 */
const ENV = z.object({
  MODEL_API_PORT: port(8080),
  DIRECTORY_API_PORT: port(8081),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().optional(),
  DATABASE_POOL_SIZE: integer(1, 1000, 10),
  REDIS_URL: z.string().optional(),
  WORKERS: z
    .union([
      z.literal('auto').transform(() => availableParallelism()),
      z.coerce.number().int().min(1).max(64),
    ])
    .default(1)
    .describe('must be a whole number from 1 to 64, or auto'),
  BOOTSTRAP_ADMIN_KEY: z.string().optional(),
  CORS_ORIGINS: z
    .string()
    .trim()
    .default('*')
    .transform((raw) => (raw === '*' ? raw : raw.split(',')))
    .pipe(z.union([z.literal('*'), z.array(origin)]))
    .describe(
      'must be * or comma-separated origins such as https://app.example.eu (scheme, host and port, no path)',
    ),
  HEADERS_TIMEOUT_MS: integer(1000, 600_000, 10_000),
  REQUEST_TIMEOUT_MS: integer(1000, 3_600_000, 120_000),
  MAX_CONNECTIONS: integer(1, 1_000_000, 10_000),
  MAX_CONNECTIONS_PER_IP: integer(0, 1_000_000, 512),
  MAX_REQUESTS_PER_SOCKET: integer(0, 1_000_000_000, 10_000),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('must be fatal, error, warn, info, debug, trace or silent'),
  LOG_FORMAT: z.enum(['pretty', 'json']).optional().describe('must be pretty or json'),
  MODEL_API_PUBLIC_URL: httpUrl,
  PUBLIC_DIRECTORY_URL: httpUrl,
  MAIL_OUTBOX_DIR: z.string().optional(),
  USAGE_JOURNAL_DIR: z.string().optional(),
  DIRECTORY_API_URL: httpUrl,
  MODEL_API_URL: httpUrl,
  // JSON or a file, checked field by field by loadEnginesConfig (it names the faulty field)
  MODEL_ENGINES: z.string().optional(),
  SSE_KEEP_ALIVE_MS: integer(100, 600_000, 15_000),
  MCP_CALL_TIMEOUT_MS: integer(100, 600_000, 15_000),
  MCP_ALLOWED_ORIGINS: z
    .string()
    .trim()
    .transform((raw) => (raw === '*' ? raw : raw.split(',')))
    .pipe(z.union([z.literal('*'), z.array(origin)]))
    .optional()
    .describe('must be * or comma-separated origins such as https://agents.example.eu'),
  MCP_ALLOWED_HOSTS: z
    .string()
    .trim()
    .toLowerCase()
    .transform((raw) => (raw === '*' ? raw : raw.split(',').map((h) => h.trim())))
    .pipe(
      z.union([z.literal('*'), z.array(z.string().regex(/^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/))]),
    )
    .optional()
    .describe('must be * or comma-separated hosts such as model.api.example.eu or 10.0.0.5:8080'),
  IMAGE_WORKERS: integer(1, 64, 2),
  POCKETSPHINX_MODEL_DIR: z.string().optional(),
  REALTIME_MAX_SECONDS: integer(10, 86_400, 1800),
  MCP_REMOTE_PRIVATE_ADDRESSES: flag,
  SECRETS_ENCRYPTION_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/)
    .transform((hex) => Buffer.from(hex, 'hex'))
    .optional()
    .describe('must be 64 hex digits (32 bytes), e.g. from `openssl rand -hex 32`'),
  SECRETS_KEY_FILE: z.string().trim().min(1).optional(),
  JOB_WORKERS: integer(0, 256, 16),
  METRICS_KEY: z
    .string()
    .regex(/^[\x21-\x7e]{24,256}$/)
    .optional()
    .describe('must be 24 to 256 printable characters without spaces, e.g. from `openssl rand -hex 32`'),
  // no .default() here: zod 4 gives a default back after a transform to undefined (`off`)
  METRICS_PORT: z
    .union([z.literal('off').transform(() => undefined), z.coerce.number().int().min(0).max(65535)])
    .optional()
    .describe('must be a port number from 0 to 65535, or off'),
  METRICS_HOST: z.string().trim().min(1).default('127.0.0.1'),
  OUTBOUND_ALLOW_PRIVATE: flag,
  OUTBOUND_DNS_SERVERS: z
    .string()
    .transform((raw) => raw.split(','))
    .pipe(z.array(dnsServer))
    .optional()
    .describe('takes IP addresses with an optional port, comma-separated (1.1.1.1,127.0.0.1:5353,[::1]:53)'),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default('0s,5s,5m,30m,2h,5h,10h,14h,20h,24h')
    .transform((raw) => raw.split(','))
    .pipe(z.array(duration).min(1).max(20))
    .describe(`takes ${DURATIONS}, 1 to 20 of them, comma-separated`),
  WEBHOOK_DISABLE_AFTER: duration.default(5 * UNIT_MS.d!).describe(`takes ${DURATIONS}`),
  WEBHOOK_TIMEOUT_MS: integer(100, 600_000, 15_000),
  CRM_CHECK_TIMEOUT_MS: integer(100, 60_000, 10_000),
  CURRENCY_RATES: z
    .string()
    .regex(/^[A-Z]{3}=[0-9]{1,6}(\.[0-9]{1,8})?(,[A-Z]{3}=[0-9]{1,6}(\.[0-9]{1,8})?)*$/)
    .optional()
    .describe('comma-separated CODE=euros, e.g. PLN=0.2351,CZK=0.0397'),
  CURRENCY_RATES_DATE: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional()
    .describe('YYYY-MM-DD'),
  VAT_RATE: z
    .string()
    .regex(/^(100|[0-9]{1,2})(\.[0-9]{1,2})?$/)
    .refine((raw) => Number(raw) <= 100)
    .default('0')
    .describe('must be a percentage from 0 to 100 with at most two decimals'),
  DEMO_LISTINGS: integer(0, 10_000_000, 20_000),
  MODEL_RATE_LIMIT_RPM: wholeNumber,
  MODEL_RATE_LIMIT_TPM: wholeNumber,
  MODEL_IMAGES_PER_MINUTE: wholeNumber,
  MODEL_AUDIO_SECONDS_PER_MINUTE: wholeNumber,
  DIRECTORY_RATE_LIMIT_RPS: z.coerce
    .number()
    .positive()
    .finite()
    .default(60)
    .describe('must be a positive number'),
  DIRECTORY_DAILY_QUOTA: wholeNumber,
  SEARCH_CACHE: z
    .enum(['on', 'off'])
    .default('on')
    .transform((raw) => raw === 'on')
    .describe('must be on or off'),
  VECTOR_KERNEL: z.enum(['wasm', 'js']).optional().describe('must be wasm or js'),
  SEARCH_INDEX_SNAPSHOT: z.string().trim().min(1).optional().describe('must be a file path or off'),
  SMTP_URL: z
    .string()
    .trim()
    .refine((raw) => {
      try {
        const url = new URL(raw);
        return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
      } catch {
        return false;
      }
    })
    .optional()
    .describe(
      'must be smtp://[user:password@]host[:port] or smtps://..., e.g. smtps://apikey:secret@smtp.relay.example:465',
    ),
  SMTP_MAX_CONNECTIONS: integer(1, 100, 5),
  SMTP_TIMEOUT_MS: integer(1000, 600_000, 30_000),
  // The default is the input's: zod 4's `.default()` after a transform yielding undefined gives
  // the default back (`off` would listen on 2525).
  INBOUND_SMTP_PORT: z
    .string()
    .default('2525')
    .pipe(
      z.union([
        z.literal('off').transform(() => undefined),
        z.coerce.number<string>().int().min(0).max(65535),
      ]),
    )
    .describe('must be a port number from 0 to 65535, or off'),
  INBOUND_MAIL_HOST: hostname,
  INBOUND_SMTP_MAX_BYTES: integer(1024, 200 * 1024 * 1024, 25 * 1024 * 1024),
  INBOUND_SMTP_MAX_CONNECTIONS: integer(1, 100_000, 200),
  INBOUND_SMTP_RATE_PER_MINUTE: integer(1, 1_000_000, 600),
  INBOUND_SMTP_TLS_CERT: z.string().optional(),
  INBOUND_SMTP_TLS_KEY: z.string().optional(),
  MAIL_SPF_INCLUDE: hostname,
  DNS_SERVERS: z
    .string()
    .transform((raw) => raw.split(','))
    .pipe(z.array(dnsServer))
    .optional()
    .describe('takes IP addresses with an optional port, comma-separated (1.1.1.1,127.0.0.1:5353,[::1]:53)'),
  CAMPAIGN_DAY_SECONDS: integer(1, 86_400, 86_400),
  ERASURE_GRACE_PERIOD: duration.default(3 * UNIT_MS.d!).describe(`takes ${DURATIONS}`),
  EXPORT_LINK_TTL: duration.default(UNIT_MS.d!).describe(`takes ${DURATIONS}`),
  RETENTION_STORED_RESPONSES: duration.default(30 * UNIT_MS.d!).describe(`takes ${DURATIONS}`),
  RETENTION_WEBHOOK_MESSAGES: duration.default(90 * UNIT_MS.d!).describe(`takes ${DURATIONS}`),
  RETENTION_INBOUND_MAIL: duration.default(180 * UNIT_MS.d!).describe(`takes ${DURATIONS}`),
  RETENTION_CONCIERGE_MAIL: duration.default(180 * UNIT_MS.d!).describe(`takes ${DURATIONS}`),
  RETENTION_REQUEST_LOGS: duration.default(14 * UNIT_MS.d!).describe(`takes ${DURATIONS}`),
  RETENTION_USAGE_DETAIL: duration.default(400 * UNIT_MS.d!).describe(`takes ${DURATIONS}`),
});

/**
 * Every environment variable the configuration knows. The README's table lists exactly these
 * (src/config.test.ts).
 */
export const CONFIG_VARIABLES = Object.keys(ENV.shape) as Array<keyof typeof ENV.shape>;

/** The variables of `env` the schema knows, an empty value as unset. */
function known(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  return Object.fromEntries(CONFIG_VARIABLES.map((name) => [name, env[name] === '' ? undefined : env[name]]));
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const input = known(env);
  const parsed = ENV.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0]) as keyof typeof ENV.shape;
    const allowed = ENV.shape[name]?.description ?? issue?.message ?? 'is not valid';
    throw new ConfigError(`${name} ${allowed}, not ${JSON.stringify(input[name])}`);
  }
  const v = parsed.data;
  const dataDir = v.DATA_DIR;
  if ((v.INBOUND_SMTP_TLS_CERT === undefined) !== (v.INBOUND_SMTP_TLS_KEY === undefined)) {
    throw new ConfigError(
      'INBOUND_SMTP_TLS_CERT and INBOUND_SMTP_TLS_KEY go together: set both PEM files, or neither',
    );
  }
  if (v.SECRETS_ENCRYPTION_KEY !== undefined && v.SECRETS_KEY_FILE !== undefined) {
    throw new ConfigError(
      'SECRETS_ENCRYPTION_KEY and SECRETS_KEY_FILE are two ways to give one key: set one of them',
    );
  }
  const inboundHost =
    v.INBOUND_MAIL_HOST ?? (v.PUBLIC_DIRECTORY_URL ? new URL(v.PUBLIC_DIRECTORY_URL).hostname : 'localhost');
  return {
    host: v.HOST,
    modelPort: v.MODEL_API_PORT,
    directoryPort: v.DIRECTORY_API_PORT,
    dataDir,
    databaseUrl: v.DATABASE_URL,
    redisUrl: v.REDIS_URL,
    bootstrapAdminKey: v.BOOTSTRAP_ADMIN_KEY,
    logLevel: v.LOG_LEVEL,
    logFormat: logFormatOf(v.LOG_FORMAT, Boolean(process.stdout.isTTY)),
    outboxDir:
      v.MAIL_OUTBOX_DIR ??
      (dataDir.startsWith('memory://') ? join(tmpdir(), 'eurus-outbox') : join(dataDir, 'outbox')),
    usageJournalDir:
      v.USAGE_JOURNAL_DIR === 'off'
        ? undefined
        : (v.USAGE_JOURNAL_DIR ??
          (dataDir.startsWith('memory://') ? undefined : join(dataDir, 'usage-journal'))),
    vatRate: v.VAT_RATE,
    currencyRates: {
      rates: Object.fromEntries(
        (v.CURRENCY_RATES ?? '')
          .split(',')
          .filter(Boolean)
          .map((pair) => pair.split('=') as [string, string]),
      ),
      date: v.CURRENCY_RATES_DATE ?? null,
    },
    corsOrigins: v.CORS_ORIGINS,
    connections: {
      headersTimeoutMs: v.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: v.REQUEST_TIMEOUT_MS,
      maxConnections: v.MAX_CONNECTIONS,
      maxConnectionsPerIp: v.MAX_CONNECTIONS_PER_IP,
      maxRequestsPerSocket: v.MAX_REQUESTS_PER_SOCKET,
    },
    publicModelUrl: v.MODEL_API_PUBLIC_URL ?? `http://localhost:${v.MODEL_API_PORT}`,
    directoryApiUrl: v.DIRECTORY_API_URL,
    modelApiUrl: v.MODEL_API_URL,
    mcpCallTimeoutMs: v.MCP_CALL_TIMEOUT_MS,
    // the origin of MODEL_API_PUBLIC_URL, or of its default (http://localhost:MODEL_API_PORT)
    mcpAllowedOrigins: v.MCP_ALLOWED_ORIGINS ?? [
      new URL(v.MODEL_API_PUBLIC_URL ?? `http://localhost:${v.MODEL_API_PORT}`).origin,
    ],
    mcpAllowedHosts: v.MCP_ALLOWED_HOSTS ?? [
      new URL(v.MODEL_API_PUBLIC_URL ?? `http://localhost:${v.MODEL_API_PORT}`).host,
    ],
    mcpRemotePrivateAddresses: v.MCP_REMOTE_PRIVATE_ADDRESSES || v.OUTBOUND_ALLOW_PRIVATE,
    secretsKey: v.SECRETS_ENCRYPTION_KEY,
    secretsKeyFile: v.SECRETS_KEY_FILE,
    jobWorkers: v.JOB_WORKERS,
    metricsKey: v.METRICS_KEY,
    metricsPort: v.METRICS_PORT,
    metricsHost: v.METRICS_HOST,
    outboundAllowPrivate: v.OUTBOUND_ALLOW_PRIVATE,
    outboundDnsServers: v.OUTBOUND_DNS_SERVERS ?? [],
    webhookRetryScheduleMs: v.WEBHOOK_RETRY_SCHEDULE,
    webhookDisableAfterMs: v.WEBHOOK_DISABLE_AFTER,
    webhookTimeoutMs: v.WEBHOOK_TIMEOUT_MS,
    crmCheckTimeoutMs: v.CRM_CHECK_TIMEOUT_MS,
    sseKeepAliveMs: v.SSE_KEEP_ALIVE_MS,
    databasePoolSize: v.DATABASE_POOL_SIZE,
    demoListings: v.DEMO_LISTINGS,
    publicDirectoryUrl: v.PUBLIC_DIRECTORY_URL,
    // its own errors name the faulty field; an upstream's api_key_env names a variable of `env`
    engines: loadEnginesConfig(env),
    mediaEngines: loadMediaEnginesConfig(env),
    imageUrlBase: v.MODEL_API_PUBLIC_URL,
    imageWorkers: v.IMAGE_WORKERS,
    recognizerModelDir: v.POCKETSPHINX_MODEL_DIR,
    realtimeMaxSeconds: v.REALTIME_MAX_SECONDS,
    limits: {
      modelRpm: v.MODEL_RATE_LIMIT_RPM,
      modelTpm: v.MODEL_RATE_LIMIT_TPM,
      imagesPerMinute: v.MODEL_IMAGES_PER_MINUTE,
      audioSecondsPerMinute: v.MODEL_AUDIO_SECONDS_PER_MINUTE,
      directoryRps: v.DIRECTORY_RATE_LIMIT_RPS,
      directoryDailyQuota: v.DIRECTORY_DAILY_QUOTA,
    },
    workers: v.WORKERS,
    searchCache: v.SEARCH_CACHE,
    vectorKernel: v.VECTOR_KERNEL,
    searchSnapshot:
      v.SEARCH_INDEX_SNAPSHOT === 'off'
        ? undefined
        : (v.SEARCH_INDEX_SNAPSHOT ??
          (dataDir.startsWith('memory://') ? undefined : join(dataDir, 'search-index.snapshot'))),
    mail: {
      smtpUrl: v.SMTP_URL,
      smtpMaxConnections: v.SMTP_MAX_CONNECTIONS,
      smtpTimeoutMs: v.SMTP_TIMEOUT_MS,
      inboundPort: v.INBOUND_SMTP_PORT,
      inboundHost,
      inboundMaxBytes: v.INBOUND_SMTP_MAX_BYTES,
      inboundMaxConnections: v.INBOUND_SMTP_MAX_CONNECTIONS,
      inboundRatePerMinute: v.INBOUND_SMTP_RATE_PER_MINUTE,
      inboundTls:
        v.INBOUND_SMTP_TLS_CERT !== undefined && v.INBOUND_SMTP_TLS_KEY !== undefined
          ? { certFile: v.INBOUND_SMTP_TLS_CERT, keyFile: v.INBOUND_SMTP_TLS_KEY }
          : undefined,
      spfInclude: v.MAIL_SPF_INCLUDE ?? inboundHost,
      dnsServers: v.DNS_SERVERS ?? [],
    },
    campaignDaySeconds: v.CAMPAIGN_DAY_SECONDS,
    erasureGraceMs: v.ERASURE_GRACE_PERIOD,
    exportLinkTtlMs: v.EXPORT_LINK_TTL,
    retention: {
      storedResponsesMs: v.RETENTION_STORED_RESPONSES,
      webhookMessagesMs: v.RETENTION_WEBHOOK_MESSAGES,
      inboundMailMs: v.RETENTION_INBOUND_MAIL,
      conciergeMailMs: v.RETENTION_CONCIERGE_MAIL,
      requestLogsMs: v.RETENTION_REQUEST_LOGS,
      usageDetailMs: v.RETENTION_USAGE_DETAIL,
    },
  };
}
