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
import { type Request, type Response, Router } from 'express';
import { BadRequestError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import { HUB_TOOLS, HubToolError, runHubTool } from './hub.ts';

export const HUB_NAME = 'eurus-hub';
export const HUB_VERSION = '1.0.0';

export interface McpDeps {
  /** The Directory API's base URL, read at each call (the directory may listen on a port chosen at start). */
  directoryUrl: () => string;
  logger: Logger;
}

function bearerOf(req: Request): string {
  return /^Bearer[ ]+(\S+)/i.exec(req.get('authorization') ?? '')?.[1] ?? '';
}

export function hubToolList(): Tool[] {
  return HUB_TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema as Tool['inputSchema'],
    annotations: { title: tool.title, readOnlyHint: true, openWorldHint: false },
  }));
}

/** One MCP server for one request, bound to the caller's key. */
function hubServer(deps: McpDeps, bearer: string, signal: AbortSignal): Server {
  const server = new Server(
    { name: HUB_NAME, version: HUB_VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions:
        'The Eurus tool hub: search the EU business directory, read place details, geocode and reverse geocode. ' +
        'Every call is billed at the Directory API prices on your key.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: hubToolList() }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = HUB_TOOLS.find((t) => t.name === request.params.name);
    if (tool === undefined) {
      // the SDK sends an error's own message and code; McpError would prefix its code to the message
      throw Object.assign(new Error(`Unknown tool: ${request.params.name}`), {
        code: ErrorCode.InvalidParams,
      });
    }
    try {
      const result = await runHubTool(
        tool,
        request.params.arguments ?? {},
        { bearer, signal: AbortSignal.any([signal, extra.signal]) },
        deps.directoryUrl(),
      );
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    } catch (err) {
      if (!(err instanceof HubToolError)) deps.logger.error({ err, tool: tool.name }, 'hub tool failed');
      const message = err instanceof HubToolError ? err.message : `${tool.name} failed on the server.`;
      return { content: [{ type: 'text', text: message }], isError: true };
    }
  });
  return server;
}

export function createMcpRouter(deps: McpDeps): Router {
  const router = Router();
  router.post('/v1/mcp', async (req: Request, res: Response) => {
    // The transport answers a message it cannot read with a JSON-RPC error and a bare 400; the
    // same check here answers it in the error envelope every 400 of this API uses.
    const parsed = JSONRPCMessageSchema.safeParse(req.body);
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
    const server = hubServer(deps, bearerOf(req), controller.signal);
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  return router;
}
