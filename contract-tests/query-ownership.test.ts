// A query parameter that names a resource of another account is a 404, as the resource's own
// operations answer, never a 200 with an empty or zero report (issue 29, finding 8). Every such
// parameter of both specs: `project_id` and `key_id` of GET /v1/usage on both services,
// `project_id` of GET /v1/keys, `campaign_id` of GET /v1/replies. Both storages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from './support/client.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';

const STORAGES = await storages();
const PERIOD = 'from=2026-11-01&to=2026-11-02';

describe.each(STORAGES)('query parameters naming resources on %s', (storage: Storage) => {
  let servers: TestServers;
  let mine: { projectId: string; keyId: string };
  let theirs: { projectId: string; keyId: string; campaignId: string };

  beforeAll(async () => {
    servers = await startTestServers(storage);
    const { accounts, db } = servers.platform;
    const [admin] = await db.query<{ id: string; project_id: string }>(
      'select id, project_id from api_keys limit 1',
    );
    mine = { projectId: admin!.project_id, keyId: admin!.id };
    const other = await accounts.createAccount('other');
    const key = await accounts.createKey(other.accountId, { name: 'theirs', scopes: ['admin', 'sales'] });
    const campaignId = 'cmp_01JD8W3V6Q2M4T7Y9ZBC5XOTHR';
    await db.query(
      `insert into campaigns (id, account_id, project_id, key_id, name, target_list_id, sending_domain_id,
         from_email, from_name, steps, hourly_cap, created)
       values ($1, $2, $3, $4, 'theirs', 'tl_x', 'sd_x', 'a@b.example', 'A', '[]', 10, 0)`,
      [campaignId, other.accountId, other.projectId, key.id],
    );
    theirs = { projectId: other.projectId, keyId: key.id, campaignId };
  });
  afterAll(async () => servers?.stop());

  async function get(service: 'model' | 'directory', path: string) {
    const res = await send(servers.urls[service]!, servers.adminKey, 'GET', path);
    return { status: res.status, body: res.body as { error?: { code: string; param: string | null } } };
  }

  it.each([
    ['model', `/v1/usage?${PERIOD}&project_id=`, 'projectId', 'project_id'],
    ['model', `/v1/usage?${PERIOD}&key_id=`, 'keyId', 'key_id'],
    ['directory', `/v1/usage?${PERIOD}&project_id=`, 'projectId', 'project_id'],
    ['directory', `/v1/usage?${PERIOD}&key_id=`, 'keyId', 'key_id'],
    ['model', '/v1/keys?project_id=', 'projectId', 'project_id'],
  ] as const)('%s %s<another account> is a 404 naming the parameter', async (service, path, field, param) => {
    const own = await get(service, `${path}${mine[field]}`);
    expect(own.status).toBe(200);
    const foreign = await get(service, `${path}${theirs[field]}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toMatchObject({ code: 'not_found', param });
  });

  it("GET /v1/replies?campaign_id=<another account's campaign> is a 404", async () => {
    const foreign = await get('directory', `/v1/replies?campaign_id=${theirs.campaignId}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error?.code).toBe('campaign_not_found');
    expect((await get('directory', '/v1/replies')).status).toBe(200);
  });
});
