// Keys and projects of the model API, through the generated SDK, on both storage paths.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../generated/model/client/client/index.ts';
import {
  createKey,
  createProject,
  getKey,
  getProject,
  listKeys,
  listModels,
  listProjects,
  revokeKey,
  rotateKey,
  updateProject,
} from '../generated/model/client/sdk.gen.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';
import { explain, operations, responseValidator } from './support/spec.ts';

const STORAGES = await storages();
const keyOps = Object.fromEntries(operations('model').map((op) => [op.operationId, op]));

describe.each(STORAGES)('keys and projects on %s', (storage: Storage) => {
  let servers: TestServers;
  let base: string;
  const clientFor = (secret: string) => createClient({ baseUrl: base, auth: secret });

  beforeAll(async () => {
    servers = await startTestServers(storage, { which: ['model'] });
    base = servers.urls.model as string;
  });
  afterAll(async () => servers?.stop());

  it('creates a key whose secret is shown once, then only masked', async () => {
    const admin = clientFor(servers.adminKey);
    const created = await createKey({ client: admin, body: { name: 'ci reader', scopes: ['chat'] } });
    expect(created.response?.status).toBe(201);
    const key = created.data!;
    const validate = responseValidator(keyOps.createKey!, '201');
    expect(validate(key), explain(validate)).toBe(true);
    expect(key.secret).toMatch(/^sk_[0-9A-Za-z]{48}$/);
    expect(key.preview).toBe(`sk_...${key.secret.slice(-4)}`);

    const fetched = await getKey({ client: admin, path: { id: key.id } });
    expect(fetched.data).toMatchObject({ id: key.id, preview: key.preview, status: 'active' });
    expect(JSON.stringify(fetched.data)).not.toContain(key.secret);

    const listed = await listKeys({ client: admin, query: { limit: 100 } });
    expect(listed.data?.data.map((k) => k.id)).toContain(key.id);
    expect(JSON.stringify(listed.data)).not.toContain(key.secret);
  });

  it('stores no secret, only its hash', async () => {
    const admin = clientFor(servers.adminKey);
    const { data: key } = await createKey({ client: admin, body: { name: 'hash check', scopes: ['chat'] } });
    const rows = await servers.platform.db.query<Record<string, unknown>>(
      'select * from api_keys where id = $1',
      [key!.id],
    );
    expect(JSON.stringify(rows)).not.toContain(key!.secret);
    expect(JSON.stringify(rows)).not.toContain(key!.secret.slice(3));
  });

  it('answers 401 on the very next call after a revoke', async () => {
    const admin = clientFor(servers.adminKey);
    const { data: key } = await createKey({ client: admin, body: { name: 'to revoke', scopes: ['admin'] } });
    const user = clientFor(key!.secret);
    expect((await listModels({ client: user })).response?.status).not.toBe(401);
    const revoked = await revokeKey({ client: admin, path: { id: key!.id } });
    expect(revoked.data?.status).toBe('revoked');
    const after = await listKeys({ client: user });
    expect(after.response?.status).toBe(401);
    expect(after.error).toMatchObject({ error: { type: 'authentication_error', code: 'invalid_api_key' } });
  });

  it('rotates: same id, new secret once, old secret dead at once without grace', async () => {
    const admin = clientFor(servers.adminKey);
    const { data: key } = await createKey({ client: admin, body: { name: 'rotating', scopes: ['admin'] } });
    await listKeys({ client: clientFor(key!.secret) }); // warm the cache
    const { data: rotated } = await rotateKey({ client: admin, path: { id: key!.id }, body: {} });
    expect(rotated!.id).toBe(key!.id);
    expect(rotated!.secret).not.toBe(key!.secret);
    expect((await listKeys({ client: clientFor(key!.secret) })).response?.status).toBe(401);
    expect((await listKeys({ client: clientFor(rotated!.secret) })).response?.status).toBe(200);
  });

  it('rotates with a grace period: both secrets work until it ends', async () => {
    const admin = clientFor(servers.adminKey);
    const { data: key } = await createKey({ client: admin, body: { name: 'graceful', scopes: ['admin'] } });
    const { data: rotated } = await rotateKey({
      client: admin,
      path: { id: key!.id },
      body: { grace_period_seconds: 3600 },
    });
    expect(rotated!.previous_secret_expires_at).toBeGreaterThan(Date.now() / 1000 + 3500);
    expect((await listKeys({ client: clientFor(key!.secret) })).response?.status).toBe(200);
    expect((await listKeys({ client: clientFor(rotated!.secret) })).response?.status).toBe(200);
    const again = await revokeKey({ client: admin, path: { id: key!.id } });
    expect(again.data?.status).toBe('revoked');
    expect((await listKeys({ client: clientFor(key!.secret) })).response?.status).toBe(401);
    expect((await listKeys({ client: clientFor(rotated!.secret) })).response?.status).toBe(401);
  });

  it('refuses to rotate a revoked key with 409', async () => {
    const admin = clientFor(servers.adminKey);
    const { data: key } = await createKey({ client: admin, body: { name: 'dead', scopes: ['chat'] } });
    await revokeKey({ client: admin, path: { id: key!.id } });
    const res = await rotateKey({ client: admin, path: { id: key!.id }, body: {} });
    expect(res.response?.status).toBe(409);
    expect(res.error).toMatchObject({ error: { code: 'key_not_active' } });
  });

  it('checks the scope of every route: 403 naming the scope', async () => {
    const admin = clientFor(servers.adminKey);
    const { data: key } = await createKey({ client: admin, body: { name: 'chat only', scopes: ['chat'] } });
    const res = await listKeys({ client: clientFor(key!.secret) });
    expect(res.response?.status).toBe(403);
    expect(res.error).toMatchObject({ error: { type: 'permission_error', code: 'insufficient_scope' } });
    expect((res.error as { error: { message: string } }).error.message).toContain("'admin'");
  });

  it('never shows another account its keys or projects: 404', async () => {
    const other = await servers.platform.accounts.createAccount('other tenant');
    const otherKey = await servers.platform.accounts.createKey(other.accountId, {
      name: 'theirs',
      scopes: ['admin'],
    });
    const admin = clientFor(servers.adminKey);
    expect((await getKey({ client: admin, path: { id: otherKey.id } })).response?.status).toBe(404);
    expect((await revokeKey({ client: admin, path: { id: otherKey.id } })).response?.status).toBe(404);
    expect((await rotateKey({ client: admin, path: { id: otherKey.id }, body: {} })).response?.status).toBe(
      404,
    );
    expect((await getProject({ client: admin, path: { id: other.projectId } })).response?.status).toBe(404);
    const created = await createKey({
      client: admin,
      body: { name: 'into their project', scopes: ['chat'], project_id: other.projectId },
    });
    expect(created.response?.status).toBe(404);
    const mine = await listKeys({ client: admin, query: { limit: 100 } });
    expect(mine.data?.data.map((k) => k.id)).not.toContain(otherKey.id);
    const theirs = await listKeys({ client: clientFor(otherKey.secret), query: { limit: 100 } });
    expect(theirs.data?.data.map((k) => k.id)).toEqual([otherKey.id]);
  });

  it('creates, reads, renames and lists projects, and keys filter by project', async () => {
    const admin = clientFor(servers.adminKey);
    const { data: project, response } = await createProject({ client: admin, body: { name: 'Billing bot' } });
    expect(response?.status).toBe(201);
    expect(project).toMatchObject({ object: 'project', name: 'Billing bot', is_default: false });
    const renamed = await updateProject({
      client: admin,
      path: { id: project!.id },
      body: { name: 'Billing' },
    });
    expect(renamed.data?.name).toBe('Billing');
    expect((await getProject({ client: admin, path: { id: project!.id } })).data?.name).toBe('Billing');
    const { data: key } = await createKey({
      client: admin,
      body: { name: 'scoped to project', scopes: ['chat'], project_id: project!.id },
    });
    const filtered = await listKeys({ client: admin, query: { project_id: project!.id } });
    expect(filtered.data?.data.map((k) => k.id)).toEqual([key!.id]);
    const projects = await listProjects({ client: admin, query: { limit: 100 } });
    expect(projects.data?.data.map((p) => p.id)).toContain(project!.id);
  });

  it('walks the key list page by page with no duplicate and no gap, also while keys are added', async () => {
    const admin = clientFor(servers.adminKey);
    for (let i = 0; i < 7; i++)
      await createKey({ client: admin, body: { name: `page ${i}`, scopes: ['chat'] } });
    const { data: all } = await listKeys({ client: admin, query: { limit: 100 } });
    const expected = all!.data.map((k) => k.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listKeys({ client: admin, query: { limit: 3, ...(cursor ? { cursor } : {}) } });
      expect(page.response?.status).toBe(200);
      if (page.data!.has_more) expect(page.response?.headers.get('link')).toContain('rel="next"');
      seen.push(...page.data!.data.map((k) => k.id));
      cursor = page.data!.next_cursor ?? undefined;
      if (pages++ === 0)
        await createKey({ client: admin, body: { name: 'inserted mid-walk', scopes: ['chat'] } });
    } while (cursor);
    expect(seen).toEqual(expected);
  });

  it('refuses an expires_at in the past or past 9999 with 400, never a 500 from storage', async () => {
    const admin = clientFor(servers.adminKey);
    for (const expires_at of [4273, 234010895482122076160]) {
      const res = await createKey({ client: admin, body: { name: 'when', scopes: ['chat'], expires_at } });
      expect(res.response?.status, String(expires_at)).toBe(400);
      expect(res.error).toMatchObject({ error: { param: 'expires_at' } });
    }
  });

  it('rejects a forged cursor with 400 invalid_cursor', async () => {
    const res = await listKeys({
      client: clientFor(servers.adminKey),
      query: { cursor: 'bm90LWEtY3Vyc29y' },
    });
    expect(res.response?.status).toBe(400);
    expect(res.error).toMatchObject({ error: { code: 'invalid_cursor', param: 'cursor' } });
  });
});

describe.each(STORAGES)('Idempotency-Key on %s', (storage: Storage) => {
  let servers: TestServers;
  beforeAll(async () => {
    servers = await startTestServers(storage, { which: ['model'] });
  });
  afterAll(async () => servers?.stop());

  it('replays the first answer for the same key and body, and refuses another body with 409', async () => {
    const client = createClient({ baseUrl: servers.urls.model!, auth: servers.adminKey });
    const headers = { 'Idempotency-Key': 'idem-test-1' };
    const first = await createProject({ client, headers, body: { name: 'Once' } });
    const again = await createProject({ client, headers, body: { name: 'Once' } });
    expect(first.response?.status).toBe(201);
    expect(again.response?.status).toBe(201);
    expect(again.data?.id).toBe(first.data?.id);
    expect(again.response?.headers.get('idempotent-replayed')).toBe('true');
    const other = await createProject({ client, headers, body: { name: 'Twice' } });
    expect(other.response?.status).toBe(409);
    expect(other.error).toMatchObject({
      error: { code: 'idempotency_key_reused', param: 'Idempotency-Key' },
    });
    const projects = await listProjects({ client, query: { limit: 100 } });
    expect(projects.data?.data.filter((p) => p.name === 'Once')).toHaveLength(1);
  });
});
