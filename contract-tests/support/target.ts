// Where the portable suites (contract-tests/portable/) run: against servers they start
// themselves (CI, on each storage path), or against a deployment named by CONTRACT_BASE_URL and
// CONTRACT_ADMIN_KEY (`npm run contract`). Either way a session creates its own project, mints
// the scoped keys it needs in it, reads and changes nothing else, and revokes its keys at the end.
import { randomBytes } from 'node:crypto';
import type { Api } from './spec.ts';
import { startTestServers, storages, type TestServers } from './server.ts';

export interface Deployment {
  api: Api;
  url: string;
  modelUrl: string;
  adminKey: string;
}

/** The deployment under test, when the suites run in deployment mode. */
export function deployment(): Deployment | undefined {
  const url = process.env.CONTRACT_BASE_URL;
  const adminKey = process.env.CONTRACT_ADMIN_KEY;
  if (!url) return undefined;
  if (!adminKey) throw new Error('CONTRACT_BASE_URL is set but CONTRACT_ADMIN_KEY is not');
  const api = (process.env.CONTRACT_API ?? 'model') as Api;
  const modelUrl = process.env.CONTRACT_MODEL_URL || (api === 'model' ? url : '');
  if (!modelUrl)
    throw new Error('the directory API needs CONTRACT_MODEL_URL: keys are minted by the model API');
  return { api, url: url.replace(/\/+$/, ''), modelUrl: modelUrl.replace(/\/+$/, ''), adminKey };
}

/** Whether the suites of `api` run: always locally; in deployment mode only for the chosen API. */
export function covers(api: Api): boolean {
  const target = deployment();
  return !target || target.api === api;
}

/** Labels to run a suite under: the storage paths locally, "deployment" otherwise. */
export async function targets(): Promise<string[]> {
  return deployment() ? ['deployment'] : await storages();
}

export interface MintedKey {
  id: string;
  secret: string;
}

export interface Session {
  /** Base URL of each API. */
  urls: Record<Api, string>;
  adminKey: string;
  /** The project this session created; every key it mints lives there. */
  projectId: string;
  /** A short id naming this run, in the names of what it creates. */
  runId: string;
  mint(scopes: string[], name?: string): Promise<MintedKey>;
  /** Forget a key the test revoked itself. */
  revoked(id: string): void;
  close(): Promise<void>;
}

async function call(url: string, key: string, method: string, body?: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return JSON.parse(text) as unknown;
}

export interface SessionOptions {
  /**
   * Local servers only: DIRECTORY_RATE_LIMIT_RPS, the directory's sustained rate per key (the
   * per-second ceiling is 10 times it). Default 6. A low figure lets a burst reach its 429 even
   * on a slow, busy machine; a deployment keeps its own limits.
   */
  directoryRps?: number;
}

export async function openSession(label: string, options: SessionOptions = {}): Promise<Session> {
  const runId = randomBytes(4).toString('hex');
  let servers: TestServers | undefined;
  let urls: Record<Api, string>;
  let adminKey: string;
  const target = deployment();
  if (target) {
    urls = { model: target.modelUrl, directory: target.api === 'directory' ? target.url : '' };
    adminKey = target.adminKey;
  } else {
    // A lower directory limit (6/s, bursts of 60) so a burst from one test process reaches its 429.
    servers = await startTestServers(label === 'postgres' ? 'postgres' : 'pglite', {
      env: { DIRECTORY_RATE_LIMIT_RPS: String(options.directoryRps ?? 6) },
    });
    urls = { model: servers.urls.model as string, directory: servers.urls.directory as string };
    adminKey = servers.adminKey;
  }
  const project = (await call(`${urls.model}/v1/projects`, adminKey, 'POST', {
    name: `contract tests ${runId}`,
    metadata: { created_by: 'npm run contract', run: runId },
  })) as { id: string };
  const minted = new Set<string>();
  return {
    urls,
    adminKey,
    projectId: project.id,
    runId,
    async mint(scopes, name = `contract ${runId} ${scopes.join(' ')}`) {
      const key = (await call(`${urls.model}/v1/keys`, adminKey, 'POST', {
        name,
        scopes,
        project_id: project.id,
      })) as MintedKey;
      minted.add(key.id);
      return { id: key.id, secret: key.secret };
    },
    revoked(id) {
      minted.delete(id);
    },
    async close() {
      try {
        for (const id of minted) await call(`${urls.model}/v1/keys/${id}`, adminKey, 'DELETE');
      } finally {
        await servers?.stop();
      }
    },
  };
}
