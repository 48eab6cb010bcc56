// Keys and projects of the model API through the generated SDK, on servers started here or on a
// deployment (`npm run contract -- model`). Everything happens inside the session's own project.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/model/client/client/index.ts';
import {
  createKey,
  getKey,
  getProject,
  listKeys,
  listProjects,
  revokeKey,
  rotateKey,
  updateProject,
} from '../../generated/model/client/sdk.gen.ts';
import { bearer, expectError } from '../support/envelope.ts';
import { componentValidator, explain } from '../support/spec.ts';
import { covers, openSession, type Session, targets } from '../support/target.ts';

const TARGETS = await targets();

function valid(name: string, value: unknown) {
  const validate = componentValidator('model', name);
  expect(validate(value), `${name}: ${explain(validate)}`).toBe(true);
}

describe.runIf(covers('model')).each(TARGETS)('model API keys and projects (%s)', (label) => {
  let session: Session;
  const client = (secret: string) => createClient({ baseUrl: session.urls.model, auth: secret });
  const admin = () => client(session.adminKey);

  beforeAll(async () => {
    session = await openSession(label);
  });
  afterAll(async () => session?.close());

  it('creates a key whose secret is shown once, then only masked', async () => {
    const created = await createKey({
      client: admin(),
      body: { name: `contract ${session.runId} once`, scopes: ['chat'], project_id: session.projectId },
    });
    expect(created.response?.status).toBe(201);
    const key = created.data!;
    session.revoked(key.id);
    valid('KeyWithSecret', key);
    expect(key.preview).toBe(`sk_...${key.secret.slice(-4)}`);
    const fetched = await getKey({ client: admin(), path: { id: key.id } });
    valid('Key', fetched.data);
    expect(fetched.data).toMatchObject({ id: key.id, preview: key.preview, status: 'active' });
    expect(JSON.stringify(fetched.data)).not.toContain(key.secret);
    const listed = await listKeys({ client: admin(), query: { project_id: session.projectId, limit: 100 } });
    valid('KeyList', listed.data);
    expect(listed.data?.data.map((k) => k.id)).toContain(key.id);
    expect(JSON.stringify(listed.data)).not.toContain(key.secret);
    expect((await revokeKey({ client: admin(), path: { id: key.id } })).data?.status).toBe('revoked');
  });

  it('revokes: 401 on the very next call with the secret', async () => {
    const key = await session.mint(['admin']);
    expect(
      (await listKeys({ client: client(key.secret), query: { project_id: session.projectId } })).response
        ?.status,
    ).toBe(200);
    const revoked = await revokeKey({ client: admin(), path: { id: key.id } });
    valid('Key', revoked.data);
    expect(revoked.data).toMatchObject({ status: 'revoked' });
    session.revoked(key.id);
    const after = await fetch(`${session.urls.model}/v1/keys`, { headers: bearer(key.secret) });
    await expectError('model', after, 401, 'authentication_error', 'invalid_api_key');
  });

  it('rotates: same id, a new secret once, the old one dead at once without grace', async () => {
    const key = await session.mint(['admin']);
    const rotated = await rotateKey({ client: admin(), path: { id: key.id }, body: {} });
    valid('KeyWithSecret', rotated.data);
    expect(rotated.data!.id).toBe(key.id);
    expect(rotated.data!.secret).not.toBe(key.secret);
    const query = { project_id: session.projectId };
    expect((await listKeys({ client: client(key.secret), query })).response?.status).toBe(401);
    expect((await listKeys({ client: client(rotated.data!.secret), query })).response?.status).toBe(200);
  });

  it('rotates with a grace period: both secrets work until the key is revoked', async () => {
    const key = await session.mint(['admin']);
    const rotated = await rotateKey({
      client: admin(),
      path: { id: key.id },
      body: { grace_period_seconds: 600 },
    });
    expect(rotated.data!.previous_secret_expires_at).toBeGreaterThan(Date.now() / 1000 + 500);
    const query = { project_id: session.projectId };
    expect((await listKeys({ client: client(key.secret), query })).response?.status).toBe(200);
    expect((await listKeys({ client: client(rotated.data!.secret), query })).response?.status).toBe(200);
  });

  it('walks the keys of a project page by page: no duplicate, no gap, also while keys are added', async () => {
    for (let i = 0; i < 5; i++) await session.mint(['chat'], `contract ${session.runId} page ${i}`);
    const query = { project_id: session.projectId };
    const { data: all } = await listKeys({ client: admin(), query: { ...query, limit: 100 } });
    const expected = all!.data.map((k) => k.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listKeys({
        client: admin(),
        query: { ...query, limit: 2, ...(cursor ? { cursor } : {}) },
      });
      expect(page.response?.status).toBe(200);
      valid('KeyList', page.data);
      if (page.data!.has_more) expect(page.response?.headers.get('link')).toContain('rel="next"');
      else expect(page.data!.next_cursor).toBeNull();
      seen.push(...page.data!.data.map((k) => k.id));
      cursor = page.data!.next_cursor ?? undefined;
      if (pages++ === 0) await session.mint(['chat'], `contract ${session.runId} inserted mid-walk`);
    } while (cursor);
    expect(seen).toEqual(expected);
    expect(pages).toBeGreaterThanOrEqual(3);
  });

  it('400 on a cursor it did not issue, and on a limit out of 1..100', async () => {
    const base = `${session.urls.model}/v1/keys`;
    const auth = { headers: bearer(session.adminKey) };
    const forged = await expectError(
      'model',
      await fetch(`${base}?cursor=bm90LWEtY3Vyc29y`, auth),
      400,
      'invalid_request_error',
      'invalid_cursor',
    );
    expect(forged.param).toBe('cursor');
    for (const limit of ['0', '101', 'many']) {
      const error = await expectError(
        'model',
        await fetch(`${base}?limit=${limit}`, auth),
        400,
        'invalid_request_error',
      );
      expect(error.param).toBe('limit');
    }
    await expectError(
      'model',
      await fetch(`${session.urls.model}/v1/projects?limit=0`, auth),
      400,
      'invalid_request_error',
    );
  });

  it('reads and renames its own project, and finds it in the project list', async () => {
    const project = await getProject({ client: admin(), path: { id: session.projectId } });
    valid('Project', project.data);
    expect(project.data).toMatchObject({ id: session.projectId, is_default: false });
    const renamed = await updateProject({
      client: admin(),
      path: { id: session.projectId },
      body: { name: `contract tests ${session.runId} (renamed)` },
    });
    valid('Project', renamed.data);
    expect(renamed.data?.name).toBe(`contract tests ${session.runId} (renamed)`);
    // Walk the whole list: newest first, so the session's project comes early; no duplicates.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listProjects({
        client: admin(),
        query: { limit: 100, ...(cursor ? { cursor } : {}) },
      });
      valid('ProjectList', page.data);
      seen.push(...page.data!.data.map((p) => p.id));
      cursor = page.data!.next_cursor ?? undefined;
    } while (cursor && !seen.includes(session.projectId));
    expect(seen).toContain(session.projectId);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('404 for a key or project that does not exist', async () => {
    const key = await getKey({ client: admin(), path: { id: 'key_00000000000000000000000000' } });
    expect(key.response?.status).toBe(404);
    expect(key.error).toMatchObject({ error: { type: 'invalid_request_error', code: 'not_found' } });
    const project = await getProject({ client: admin(), path: { id: 'proj_00000000000000000000000000' } });
    expect(project.response?.status).toBe(404);
  });
});
