// /v1/mcp: the tool hub as an MCP server over Streamable HTTP (stateless: every POST carries one
// JSON-RPC message and gets its answer as JSON), on the official SDK. The bearer key was checked
// by the security handler (scope `agents`); each tool call goes to the Directory API with that
// same key. The low-level Server is used because the tools are JSON Schema, not zod, and (with
// registered servers) not known before the request.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Request } from 'express';
import { BadRequestError, PermissionDeniedError } from '../platform/errors.ts';
import { SENT, operationRouter, type OperationRouter } from '../platform/route.ts';
import { type Hub, type HubDeps, hubFor, UnknownToolError } from './tools.ts';
import { HUB_NAME, HUB_VERSION } from './hub.ts';

function bearerOf(req: Request): string {
  return /^Bearer[ ]+(\S+)/i.exec(req.get('authorization') ?? '')?.[1] ?? '';
}

/** One MCP server for one request, bound to the caller's key and project. */
function hubServer(hub: Hub, signal: AbortSignal): Server {
  const server = new Server(
    { name: HUB_NAME, version: HUB_VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions:
        'The Eurus tool hub: search the EU business directory, read place details, geocode and reverse geocode ' +
        '(billed at the Directory API prices on your key), and the tools of the MCP servers your project registered, ' +
        'as <label>__<tool>.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => ({
    tools: (await hub.list(AbortSignal.any([signal, extra.signal]))).map((t): Tool => ({
      name: t.name,
      ...(t.title === undefined ? {} : { title: t.title }),
      ...(t.description === undefined || t.description === null ? {} : { description: t.description }),
      inputSchema: t.inputSchema as Tool['inputSchema'],
      ...(t.annotations === undefined || t.annotations === null ? {} : { annotations: t.annotations }),
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    try {
      const outcome = await hub.call(
        request.params.name,
        request.params.arguments ?? {},
        AbortSignal.any([signal, extra.signal]),
      );
      return {
        content: [{ type: 'text', text: outcome.text }],
        ...(outcome.structured === undefined ? {} : { structuredContent: outcome.structured }),
        ...(outcome.isError ? { isError: true } : {}),
      };
    } catch (err) {
      if (err instanceof UnknownToolError) {
        // the SDK sends an error's own message and code; McpError would prefix its code to the message
        throw Object.assign(new Error(err.message), { code: ErrorCode.InvalidParams });
      }
      throw err;
    }
  });
  return server;
}

/** Who may reach the hub (MCP_ALLOWED_ORIGINS, MCP_ALLOWED_HOSTS): `*` for anyone. */
export interface HubAccess {
  origins: '*' | string[];
  hosts: '*' | string[];
}

const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;

/**
 * The transport spec's rule against DNS rebinding: an `Origin` that is present and not allowed is
 * a 403 (no `Origin`, as server-side clients send, is fine), and so is a `Host` the hub does not
 * answer to. The SDK's own check is off by default and answers outside the error envelope.
 */
export function checkHubAccess(req: Request, access: HubAccess): void {
  const origin = req.get('origin');
  if (origin !== undefined && access.origins !== '*') {
    let normalized: string | undefined;
    try {
      normalized = new URL(origin).origin;
    } catch {
      normalized = undefined;
    }
    if (normalized === undefined || normalized === 'null' || !access.origins.includes(normalized)) {
      throw new PermissionDeniedError(
        'origin_not_allowed',
        `The MCP hub does not answer pages of ${JSON.stringify(origin)}; the operator allows origins with MCP_ALLOWED_ORIGINS.`,
      );
    }
  }
  const host = (req.get('host') ?? '').toLowerCase();
  if (access.hosts !== '*' && !LOOPBACK_HOST.test(host) && !access.hosts.includes(host)) {
    throw new PermissionDeniedError(
      'host_not_allowed',
      `The MCP hub does not answer to the host ${JSON.stringify(host)}; the operator allows hosts with MCP_ALLOWED_HOSTS.`,
    );
  }
}

export function createMcpRouter(deps: HubDeps, access: HubAccess) {
  const api: OperationRouter = operationRouter();
  // The SDK's transport writes the JSON-RPC answer itself (SENT); the validator checks the body.
  api.on('postMcpMessage', async ({ body, req, res, principal }): Promise<typeof SENT> => {
    checkHubAccess(req, access);
    // The transport answers a message it cannot read with a JSON-RPC error and a bare 400; the
    // same check here answers it in the error envelope every 400 of this API uses.
    const parsed = JSONRPCMessageSchema.safeParse(body);
    if (!parsed.success) {
      throw new BadRequestError(
        'invalid_jsonrpc_message',
        `Not a JSON-RPC 2.0 message: ${parsed.error.issues[0]?.message ?? 'invalid'}.`,
        { param: 'body' },
      );
    }
    // Every answer here is JSON, so a client that omits text/event-stream from Accept (curl,
    // a fuzzer) is served as well; the transport itself insists on both.
    req.headers.accept = 'application/json, text/event-stream';
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const hub = hubFor(deps, { projectId: principal().projectId, bearer: bearerOf(req) });
    const server = hubServer(hub, controller.signal);
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
      void hub.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    return SENT;
  });
  return api;
}
