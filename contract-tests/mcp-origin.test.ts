// The MCP hub validates Origin and Host as the Streamable HTTP transport requires (DNS
// rebinding; issue 29, finding 4), through the official MCP SDK client: a page of another origin
// is refused, a server-side client without Origin keeps working.
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServers, type TestServers } from './support/server.ts';

const PUBLIC = 'https://model.test.example';

describe('the MCP hub checks Origin and Host', () => {
  let servers: TestServers;
  beforeAll(async () => {
    servers = await startTestServers('pglite', {
      which: ['model'],
      env: { MODEL_API_PUBLIC_URL: PUBLIC, MCP_ALLOWED_HOSTS: 'mcp.test.example' },
    });
  });
  afterAll(async () => servers?.stop());

  async function connect(headers: Record<string, string>) {
    const client = new Client({ name: 'origin-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${servers.urls.model}/v1/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${servers.adminKey}`, ...headers } },
    });
    await client.connect(transport);
    return client;
  }

  it('serves an SDK client that sends no Origin (server to server)', async () => {
    const client = await connect({});
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('search_directory');
    await client.close();
  });

  it('serves a page of the allowed origin (MODEL_API_PUBLIC_URL by default)', async () => {
    const client = await connect({ Origin: PUBLIC });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
  });

  it.each(['http://evil.example', 'null', `${PUBLIC}.evil.example`])(
    'refuses Origin %s with a 403',
    async (origin) => {
      await expect(connect({ Origin: origin })).rejects.toThrow(/403|origin_not_allowed/);
      const res = await fetch(`${servers.urls.model}/v1/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${servers.adminKey}`,
          'content-type': 'application/json',
          origin,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('origin_not_allowed');
    },
  );

  function post(host: string) {
    const url = new URL(`${servers.urls.model}/v1/mcp`);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    return new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: {
            host,
            authorization: `Bearer ${servers.adminKey}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  it('refuses a Host it does not answer to (a rebound name), serves the allowed and loopback ones', async () => {
    const rebound = await post('attacker.example');
    expect(rebound.status).toBe(403);
    expect(rebound.text).toContain('host_not_allowed');
    expect((await post('mcp.test.example')).status).toBe(200);
    expect((await post(`localhost:${new URL(servers.urls.model!).port}`)).status).toBe(200);
  });
});
