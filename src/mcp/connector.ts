// The hub as the `mcp` tool of /v1/responses (`server_label: "eurus"`, no `server_url`): its tools
// run in this process, on the request's own key, exactly as /v1/mcp runs them.
import { BadRequestError, PermissionDeniedError } from '../platform/errors.ts';
import type { McpConnector } from '../agents/runtime.ts';
import { HUB_TOOLS, runHubTool } from './hub.ts';

/** The server_label of the hub in an `mcp` tool. */
export const HUB_LABEL = 'eurus';

export function hubConnector(directoryUrl: () => string): McpConnector {
  return {
    check(tool, principal) {
      if (tool.server_url !== undefined) {
        throw new BadRequestError(
          'mcp_server_url_unavailable',
          'mcp tools with a server_url need the outbound guard, which this deployment does not have yet; use the hub (server_label "eurus", no server_url).',
          { param: 'tools' },
        );
      }
      if (tool.server_label !== HUB_LABEL) {
        throw new BadRequestError(
          'unknown_mcp_server',
          `No mcp server is labelled '${tool.server_label}': the hub is server_label "${HUB_LABEL}" without a server_url.`,
          { param: 'tools' },
        );
      }
      if (!principal.scopes.includes('agents')) {
        throw new PermissionDeniedError(
          'insufficient_scope',
          `This key lacks the scope 'agents' needed for the tool hub (the mcp tool '${HUB_LABEL}').`,
        );
      }
      return Promise.resolve();
    },
    connect(_tool, caller) {
      return Promise.resolve({
        listTools: () =>
          Promise.resolve(
            HUB_TOOLS.map((t) => ({
              name: t.name,
              description: t.description,
              inputSchema: t.inputSchema,
              annotations: { title: t.title, readOnlyHint: true },
            })),
          ),
        async callTool(name, args, signal) {
          const tool = HUB_TOOLS.find((t) => t.name === name);
          if (tool === undefined) throw new Error(`the hub has no tool '${name}'`);
          return JSON.stringify(
            await runHubTool(tool, args, { bearer: caller.bearer, signal }, directoryUrl()),
          );
        },
        close: () => Promise.resolve(),
      });
    },
  };
}
