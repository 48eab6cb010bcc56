// One configuration: the README's table lists exactly the variables the configuration knows,
// nothing else reads the environment, and a bad value stops the real entry point with exit
// code 2 and a message naming the variable and what it may be.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from './config.ts';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    // tests and their helpers (testing/) are not the service's code
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('configuration', () => {
  it("the README's table lists exactly the variables the configuration knows", () => {
    const readme = readFileSync('README.md', 'utf8');
    const table = readme.slice(readme.indexOf('| variable '));
    const rows = table.slice(0, table.indexOf('\n\n'));
    const listed = [...rows.matchAll(/^\| `([A-Z][A-Z0-9_]+)`/gm)].map((m) => m[1]);
    expect([...listed].sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  it('nothing in src/ but config.ts reads process.env', () => {
    const readers = sources('src').filter(
      (file) => file !== join('src', 'config.ts') && /\bprocess\.env\b/.test(readFileSync(file, 'utf8')),
    );
    expect(readers).toEqual([]);
  });

  it('takes the defaults when nothing is set, an empty value as unset', () => {
    const config = loadConfig({ HOST: '', JOB_WORKERS: '' });
    expect(config).toMatchObject({
      host: '0.0.0.0',
      modelPort: 8080,
      jobWorkers: 16,
      workers: 1,
      corsOrigins: '*',
      vatRate: '0',
      searchCache: true,
      vectorKernel: undefined,
      webhookDisableAfterMs: 5 * 86_400_000,
      limits: { directoryRps: 60 },
    });
    expect(config.webhookRetryScheduleMs).toHaveLength(10);
    // as the README says: the origin (and host) of MODEL_API_PUBLIC_URL, whose default is localhost
    expect(config.mcpAllowedOrigins).toEqual(['http://localhost:8080']);
    expect(config.mcpAllowedHosts).toEqual(['localhost:8080']);
    expect(loadConfig({ MODEL_API_PUBLIC_URL: 'https://api.example.eu' }).mcpAllowedOrigins).toEqual([
      'https://api.example.eu',
    ]);
  });

  it('reads each kind of value', () => {
    const config = loadConfig({
      WORKERS: '3',
      CORS_ORIGINS: 'https://app.example.eu, http://localhost:5173',
      MODEL_API_PUBLIC_URL: 'https://api.example.eu/',
      OUTBOUND_ALLOW_PRIVATE: '1',
      WEBHOOK_RETRY_SCHEDULE: '0s,500ms,2h',
      SECRETS_ENCRYPTION_KEY: 'ab'.repeat(32),
      MODEL_RATE_LIMIT_RPM: '4',
      DIRECTORY_RATE_LIMIT_RPS: '0.5',
      SEARCH_CACHE: 'off',
      VECTOR_KERNEL: 'js',
    });
    expect(config).toMatchObject({
      workers: 3,
      corsOrigins: ['https://app.example.eu', 'http://localhost:5173'],
      publicModelUrl: 'https://api.example.eu',
      outboundAllowPrivate: true,
      mcpRemotePrivateAddresses: true,
      webhookRetryScheduleMs: [0, 500, 7_200_000],
      limits: { modelRpm: 4, directoryRps: 0.5 },
      searchCache: false,
      vectorKernel: 'js',
    });
    expect(config.secretsKey?.length).toBe(32);
  });

  // Regression: zod 4's `.default(2525)` gave back 2525 for the `undefined` that `off` mapped to,
  // so INBOUND_SMTP_PORT=off still listened. Every value that turns something off, through loadConfig.
  const OFF: Array<[string, string, (config: ReturnType<typeof loadConfig>) => unknown, unknown, string]> = [
    ['INBOUND_SMTP_PORT', 'off', (c) => c.mail.inboundPort, undefined, '2526'],
    ['METRICS_PORT', 'off', (c) => c.metricsPort, undefined, '9464'],
    ['USAGE_JOURNAL_DIR', 'off', (c) => c.usageJournalDir, undefined, '/var/lib/eurus/journal'],
    ['SEARCH_CACHE', 'off', (c) => c.searchCache, false, 'on'],
    ['SEARCH_INDEX_SNAPSHOT', 'off', (c) => c.searchSnapshot, undefined, '/var/lib/eurus/index.snapshot'],
    ['MAX_CONNECTIONS_PER_IP', '0', (c) => c.connections.maxConnectionsPerIp, 0, '10'],
    ['MAX_REQUESTS_PER_SOCKET', '0', (c) => c.connections.maxRequestsPerSocket, 0, '10'],
    ['JOB_WORKERS', '0', (c) => c.jobWorkers, 0, '1'],
    ['DEMO_LISTINGS', '0', (c) => c.demoListings, 0, '10'],
  ];
  it.each(OFF)('%s=%s turns it off', (name, value, read, off, on) => {
    expect(read(loadConfig({ [name]: value }))).toBe(off);
    expect(read(loadConfig({ [name]: on }))).not.toBe(off);
  });

  it('lists every variable whose README row says how to turn it off', () => {
    const readme = readFileSync('README.md', 'utf8');
    const offable = [
      ...readme.matchAll(
        /^\| `([A-Z][A-Z0-9_]+)` .*(`off`|`0` for none|`0`: no limit|`0` for an instance)/gm,
      ),
    ];
    expect(offable.map((m) => m[1]).sort()).toEqual(OFF.map(([name]) => name).sort());
  });

  it.each([
    ['WORKERS', '65', /^WORKERS must be a whole number from 1 to 64, or auto, not "65"$/],
    ['CORS_ORIGINS', 'https://app.example.eu/path', /^CORS_ORIGINS must be \* or comma-separated origins/],
    [
      'MODEL_API_PUBLIC_URL',
      'ftp://x.eu',
      /^MODEL_API_PUBLIC_URL must be an http or https URL, not "ftp:\/\/x.eu"$/,
    ],
    ['LOG_LEVEL', 'loud', /^LOG_LEVEL must be fatal, error, warn, info, debug, trace or silent, not "loud"$/],
    ['LOG_FORMAT', 'text', /^LOG_FORMAT must be pretty or json, not "text"$/],
    ['SECRETS_ENCRYPTION_KEY', 'abc', /^SECRETS_ENCRYPTION_KEY must be 64 hex digits/],
    ['VAT_RATE', '101', /^VAT_RATE must be a percentage from 0 to 100/],
    ['MODEL_RATE_LIMIT_TPM', '0', /^MODEL_RATE_LIMIT_TPM must be a whole number of at least 1, not "0"$/],
    ['DIRECTORY_RATE_LIMIT_RPS', '-1', /^DIRECTORY_RATE_LIMIT_RPS must be a positive number, not "-1"$/],
    ['SEARCH_CACHE', 'no', /^SEARCH_CACHE must be on or off, not "no"$/],
    ['VECTOR_KERNEL', 'gpu', /^VECTOR_KERNEL must be wasm or js, not "gpu"$/],
    ['WEBHOOK_DISABLE_AFTER', '5 days', /^WEBHOOK_DISABLE_AFTER takes durations such as 500ms/],
    ['MODEL_ENGINES', '{not json', /MODEL_ENGINES is not valid JSON/],
    ['SMTP_URL', 'http://relay.example:25', /^SMTP_URL must be smtp:\/\/\[user:password@\]host/],
    ['DNS_SERVERS', '127.0.0.1:5353,dns.google', /^DNS_SERVERS takes IP addresses with an optional port/],
    [
      'INBOUND_SMTP_PORT',
      'on',
      /^INBOUND_SMTP_PORT must be a port number from 0 to 65535, or off, not "on"$/,
    ],
    ['INBOUND_MAIL_HOST', 'mx example', /^INBOUND_MAIL_HOST must be a host name/],
    [
      'INBOUND_SMTP_TLS_CERT',
      '/etc/ssl/cert.pem',
      /^INBOUND_SMTP_TLS_CERT and INBOUND_SMTP_TLS_KEY go together/,
    ],
  ])('refuses %s=%s, naming it and what it may be', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it.each([
    ['JOB_WORKERS', 'lots', /JOB_WORKERS must be an integer from 0 to 256/],
    ['WEBHOOK_RETRY_SCHEDULE', '0s,5 minutes', /WEBHOOK_RETRY_SCHEDULE takes durations/],
    ['DATABASE_POOL_SIZE', '0', /DATABASE_POOL_SIZE must be an integer from 1 to 1000/],
    ['OUTBOUND_ALLOW_PRIVATE', 'yes', /OUTBOUND_ALLOW_PRIVATE must be true or false/],
  ])(
    '%s=%s stops `node src/main.ts` with exit code 2, naming it',
    (name, value, message) => {
      const run = spawnSync(process.execPath, ['src/main.ts'], {
        env: { ...process.env, [name]: value, DATA_DIR: 'memory://' },
        encoding: 'utf8',
        // a guard against a hang, not a speed check: the start beside other test files is slow
        timeout: 100_000,
      });
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(/\bat .*\.ts:\d+/); // no stack trace
    },
    120_000,
  );
});
