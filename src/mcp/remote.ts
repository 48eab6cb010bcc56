// Remote MCP servers, called with the official SDK's client over Streamable HTTP. Their URLs
// pass the rules below when registered and again at each connection (DNS may have changed):
// https on public addresses only, unless MCP_REMOTE_PRIVATE_ADDRESSES allows private ones.
// These rules stand in for the platform's outbound guard (issue 15) until it lands; then the
// connection goes through it.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BadRequestError } from '../platform/errors.ts';
import type { McpConnection, McpToolInfo } from '../agents/runtime.ts';
import { HUB_NAME, HUB_VERSION } from './hub.ts';

/** An IPv4 or IPv6 address that is not on the public internet. */
export function isPrivateAddress(address: string): boolean {
  if (isIP(address) === 4) {
    const [a = 0, b = 0] = address.split('.').map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      a >= 224
    );
  }
  const lower = address.toLowerCase();
  if (lower.startsWith('::ffff:')) return isPrivateAddress(lower.slice(7));
  return (
    lower === '::' ||
    lower === '::1' ||
    lower.startsWith('fc') ||
    lower.startsWith('fd') ||
    lower.startsWith('fe8') ||
    lower.startsWith('fe9') ||
    lower.startsWith('fea') ||
    lower.startsWith('feb') ||
    lower.startsWith('ff')
  );
}

/** Throws a 400 (`url_not_allowed`) unless `raw` may be called as a remote MCP server. */
export async function checkRemoteUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadRequestError('url_not_allowed', `'${raw}' is not a URL.`, { param: 'url' });
  }
  const refuse = (why: string) =>
    new BadRequestError('url_not_allowed', `${url.href} is refused: ${why}.`, { param: 'url' });
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:'))
    throw refuse('only https URLs are called');
  if (url.username !== '' || url.password !== '')
    throw refuse('credentials belong in headers, not in the URL');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) !== 0 ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    throw refuse(`its host ${host} does not resolve`);
  }
  if (!allowPrivate && addresses.some(isPrivateAddress)) {
    throw refuse('it resolves to a private, loopback or link-local address');
  }
  return url;
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
