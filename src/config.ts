// Every setting comes from the environment; the README has the table.
import { rpmOverride, tpmOverride } from './limits/policies.ts';

export interface Config {
  host: string;
  modelPort: number;
  directoryPort: number;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  bootstrapAdminKey: string | undefined;
  logLevel: string;
  /** The environment the rest was read from, for settings owned by a module (MODEL_ENGINES). */
  env: NodeJS.ProcessEnv;
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

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  rpmOverride(env); // read per request by the limiter; a bad value fails here, at start-up
  tpmOverride(env);
  return {
    host: env.HOST || '0.0.0.0',
    modelPort: port('MODEL_API_PORT', 8080, env),
    directoryPort: port('DIRECTORY_API_PORT', 8081, env),
    dataDir: env.DATA_DIR || './data',
    databaseUrl: optional(env.DATABASE_URL),
    redisUrl: optional(env.REDIS_URL),
    bootstrapAdminKey: optional(env.BOOTSTRAP_ADMIN_KEY),
    logLevel: env.LOG_LEVEL || 'info',
    env,
  };
}
