// Remote MCP servers, called with the official SDK's client over Streamable HTTP, through the
// platform's outbound guard: their URLs are checked when registered (or named in a request) and
// again inside each connection's own lookup (DNS may have changed): https on public addresses
// only, unless MCP_REMOTE_PRIVATE_ADDRESSES (or OUTBOUND_ALLOW_PRIVATE) allows private ones.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BadRequestError } from '../platform/errors.ts';
import { checkOutboundUrl, type Outbound, outbound, OutboundRefused } from '../platform/outbound.ts';
import type { McpConnection, McpToolInfo } from '../agents/runtime.ts';
import { HUB_NAME, HUB_VERSION } from './hub.ts';

/** Throws a 400 (`url_not_allowed`) unless `raw` may be called as a remote MCP server. */
export async function checkRemoteUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  try {
    return await checkOutboundUrl(raw, { allowPrivate });
  } catch (err) {
    if (err instanceof OutboundRefused) {
      throw new BadRequestError('url_not_allowed', `${raw} is refused: ${err.message}.`, { param: 'url' });
    }
    throw err;
  }
}

/** One guard per policy for every remote server's connections (one connection pool each). */
const doors = new Map<boolean, Outbound>();
function door(allowPrivate: boolean): Outbound {
  let found = doors.get(allowPrivate);
  if (!found) {
    found = outbound({ allowPrivate });
    doors.set(allowPrivate, found);
  }
  return found;
}

function resultText(result: Record<string, unknown>): string {
  if (result.structuredContent !== undefined && result.structuredContent !== null) {
    return JSON.stringify(result.structuredContent);
  }
  const parts = Array.isArray(result.content) ? (result.content as { type?: string; text?: string }[]) : [];
  return parts
    .map((part) => (part.type === 'text' ? (part.text ?? '') : `[${part.type ?? 'content'}]`))
    .join('\n');
}

/** A session with a remote server; the first request connects (initialize), bounded by `timeoutMs`. */
export function remoteConnection(
  url: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; allowPrivate: boolean },
): McpConnection {
  let client: Client | undefined;
  const connect = async (signal: AbortSignal): Promise<Client> => {
    if (client !== undefined) return client;
    const checked = await checkRemoteUrl(url, options.allowPrivate);
    const next = new Client({ name: HUB_NAME, version: HUB_VERSION });
    const transport = new StreamableHTTPClientTransport(checked, {
      requestInit: { headers, redirect: 'error' },
      fetch: door(options.allowPrivate).fetch,
    });
    await next.connect(transport, { signal, timeout: options.timeoutMs });
    client = next;
    return next;
  };
  return {
    async listTools(signal): Promise<McpToolInfo[]> {
      const c = await connect(signal);
      const { tools } = await c.listTools({}, { signal, timeout: options.timeoutMs });
      return tools.slice(0, 512).map((t) => ({
        name: t.name,
        description: t.description ?? null,
        inputSchema: t.inputSchema as Record<string, unknown>,
        annotations: (t.annotations as Record<string, unknown> | undefined) ?? null,
      }));
    },
    async callTool(name, args, signal) {
      const c = await connect(signal);
      const result = await c.callTool({ name, arguments: args }, undefined, {
        signal,
        timeout: options.timeoutMs,
      });
      const text = resultText(result).slice(0, 256 * 1024);
      if (result.isError === true) throw new Error(text || 'the tool reported an error');
      return text;
    },
    async close() {
      await client?.close().catch(() => {});
    },
  };
}
