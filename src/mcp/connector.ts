// The `mcp` tools of /v1/responses. The hub (`server_label: "eurus"`, no `server_url`): its tools
// run in this process, on the request's own key, exactly as /v1/mcp runs them. A `server_url`: a
// remote server called with the official SDK's client, with the tool's headers (never stored).
import { BadRequestError, PermissionDeniedError } from '../platform/errors.ts';
import type { McpConnector } from '../agents/runtime.ts';
import { HUB_LABEL } from './hub.ts';
import { type HubDeps, hubFor, UnknownToolError } from './tools.ts';
import { checkRemoteUrl, remoteConnection } from './remote.ts';

export function hubConnector(deps: HubDeps): McpConnector {
  return {
    async check(tool, principal) {
      if (tool.server_url !== undefined) {
        if (tool.server_label === HUB_LABEL) {
          throw new BadRequestError(
            'label_reserved',
            `The server_label '${HUB_LABEL}' is the hub's own; give the remote server another.`,
            {
              param: 'tools',
            },
          );
        }
        await checkRemoteUrl(tool.server_url, deps.allowPrivate).catch((err: unknown) => {
          throw err instanceof BadRequestError
            ? new BadRequestError(err.code, err.message, { param: 'tools' })
            : err;
        });
        return;
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
    },
    async connect(tool, caller) {
      if (tool.server_url !== undefined) {
        const headers: Record<string, string> = { ...(tool.headers ?? {}) };
        if (tool.authorization !== undefined) headers.Authorization = `Bearer ${tool.authorization}`;
        return remoteConnection(tool.server_url, headers, {
          timeoutMs: deps.timeoutMs,
          allowPrivate: deps.allowPrivate,
        });
      }
      const hub = hubFor(deps, { projectId: caller.principal.projectId, bearer: caller.bearer });
      return {
        listTools: (signal) => hub.list(signal),
        async callTool(name, args, signal) {
          const outcome = await hub.call(name, args, signal).catch((err: unknown) => {
            throw err instanceof UnknownToolError ? new Error(`the hub has no tool '${name}'`) : err;
          });
          if (outcome.isError) throw new Error(outcome.text);
          return outcome.text;
        },
        close: () => hub.close(),
      };
    },
  };
}
