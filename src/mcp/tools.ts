// What the hub offers one caller: its own tools, and the tools of the remote servers registered
// for the caller's project, as `<label>__<tool>`. A remote server that is down or slow is left
// out of the listing and fails only the calls made to it, with a message that says so.
import type { Logger } from '../platform/logger.ts';
import type { McpConnection, McpToolInfo } from '../agents/runtime.ts';
import { HUB_TOOLS, HubToolError, runHubTool } from './hub.ts';
import type { McpServerStore, RegisteredServer } from './registry.ts';
import { remoteConnection } from './remote.ts';
import { withTimeout } from '../platform/timeout.ts';

export interface HubDeps {
  registry: McpServerStore;
  directoryUrl: () => string;
  timeoutMs: number;
  allowPrivate: boolean;
  logger: Logger;
}

export interface HubTool extends McpToolInfo {
  title?: string;
}

export interface ToolOutcome {
  text: string;
  structured?: Record<string, unknown>;
  isError: boolean;
}

/** A tool the hub does not offer this caller (an MCP -32602). */
export class UnknownToolError extends Error {
  override name = 'UnknownToolError';
}

export interface Hub {
  list(signal: AbortSignal): Promise<HubTool[]>;
  call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome>;
  close(): Promise<void>;
}

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function hubFor(deps: HubDeps, caller: { projectId: string; bearer: string }): Hub {
  let servers: Promise<RegisteredServer[]> | undefined;
  const connections = new Map<string, McpConnection>();
  const registered = () => (servers ??= deps.registry.forProject(caller.projectId));
  const connection = (server: RegisteredServer): McpConnection => {
    let open = connections.get(server.id);
    if (open === undefined) {
      open = remoteConnection(server.url, server.headers, {
        timeoutMs: deps.timeoutMs,
        allowPrivate: deps.allowPrivate,
      });
      connections.set(server.id, open);
    }
    return open;
  };
  const allowed = (server: RegisteredServer, tool: string) =>
    server.allowedTools === null || server.allowedTools.includes(tool);

  return {
    async list(signal) {
      const own: HubTool[] = HUB_TOOLS.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema,
        annotations: { title: t.title, readOnlyHint: true, openWorldHint: false },
      }));
      const remote = await Promise.all(
        (await registered()).map(async (server) => {
          try {
            const tools = await withTimeout(deps.timeoutMs, signal, (s) => connection(server).listTools(s));
            return tools
              .filter((t) => allowed(server, t.name))
              .map((t) => ({ ...t, name: `${server.label}__${t.name}` }));
          } catch (err) {
            deps.logger.warn(
              { server: server.id, err: reason(err) },
              'remote MCP server left out of the listing',
            );
            return [];
          }
        }),
      );
      return [...own, ...remote.flat()];
    },

    async call(name, args, signal) {
      const own = HUB_TOOLS.find((t) => t.name === name);
      if (own !== undefined) {
        try {
          const structured = await runHubTool(
            own,
            args,
            { bearer: caller.bearer, signal },
            deps.directoryUrl(),
          );
          return { text: JSON.stringify(structured), structured, isError: false };
        } catch (err) {
          if (!(err instanceof HubToolError)) deps.logger.error({ err, tool: name }, 'hub tool failed');
          return {
            text: err instanceof HubToolError ? err.message : `${name} failed on the server.`,
            isError: true,
          };
        }
      }
      const at = name.indexOf('__');
      const label = at > 0 ? name.slice(0, at) : '';
      const tool = at > 0 ? name.slice(at + 2) : '';
      const server = (await registered()).find((s) => s.label === label);
      if (server === undefined || tool === '' || !allowed(server, tool))
        throw new UnknownToolError(`Unknown tool: ${name}`);
      try {
        const text = await withTimeout(deps.timeoutMs, signal, (s) =>
          connection(server).callTool(tool, args, s),
        );
        return { text, isError: false };
      } catch (err) {
        if (signal.aborted) throw err;
        return { text: `The MCP server '${label}' failed on ${tool}: ${reason(err)}`, isError: true };
      }
    },

    async close() {
      await Promise.all([...connections.values()].map((c) => c.close()));
    },
  };
}
