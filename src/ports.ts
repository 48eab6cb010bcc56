// The ports a process listens on are bound first of all, before the database or the demo
// directory: a port another program holds stops the start at once with one line naming the
// variable to change (main.ts prints it), instead of minutes of loading and a stack trace.
import { createServer, type Server, type Socket } from 'node:net';
import type { ServiceName } from './platform/app.ts';

/** What a process listens for: the services, the directory's inbound SMTP listener, the metrics listener. */
export type Listener = ServiceName | 'smtp' | 'metrics';

/** The variables that set each listener's port and address. */
export const PORT_VARIABLE: Record<Listener, string> = {
  model: 'MODEL_API_PORT',
  directory: 'DIRECTORY_API_PORT',
  smtp: 'INBOUND_SMTP_PORT',
  metrics: 'METRICS_PORT',
};
const HOST_VARIABLE: Record<Listener, string> = {
  model: 'HOST',
  directory: 'HOST',
  smtp: 'HOST',
  metrics: 'METRICS_HOST',
};
/** The listeners that `off` turns off. */
const OFFABLE = new Set<Listener>(['smtp', 'metrics']);

/** A port that cannot be listened on: its message is the one line start-up prints. */
export class PortError extends Error {
  override name = 'PortError';
}

/** The one line for `err`, from listening on `host:port` for `listener`. */
export function portError(listener: Listener, host: string, port: number, err: unknown): PortError {
  const variable = PORT_VARIABLE[listener];
  const or = OFFABLE.has(listener) ? ' or off' : '';
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') {
    return new PortError(
      `${variable} is taken: ${port} (another program listens there); set ${variable} to a free port${or}`,
    );
  }
  if (code === 'EACCES') {
    return new PortError(
      `${variable} is refused: ${port} needs privileges this process lacks; set ${variable} to a port from 1024${or}`,
    );
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    const hostVariable = HOST_VARIABLE[listener];
    return new PortError(
      `${hostVariable} is not an address of this machine: ${host}; set ${hostVariable} to one of its addresses`,
    );
  }
  return new PortError(
    `${variable} cannot be listened on: ${host}:${port} (${code ?? String(err)}); set ${variable} to another port${or}`,
  );
}

/** Whether `err` came from listening (a port or address refused), not from anything else. */
export function isListenError(err: unknown): boolean {
  const e = err as NodeJS.ErrnoException | undefined;
  return (
    e?.syscall === 'listen' || e?.code === 'EADDRINUSE' || e?.code === 'EACCES' || e?.code === 'EADDRNOTAVAIL'
  );
}

/**
 * Binds every listener or none: the first that fails closes the others and rejects with its
 * PortError.
 */
export async function bindAll<T extends { listener: Listener; host: string; port: number; server: Server }>(
  entries: T[],
): Promise<T[]> {
  const seen = new Map<number, Listener>();
  for (const { listener, port } of entries) {
    const first = seen.get(port);
    // the same port on two addresses may both bind, but one service's clients would reach the other
    if (first && port !== 0) {
      const variable = PORT_VARIABLE[listener];
      throw new PortError(
        `${variable} is taken: ${port} (${PORT_VARIABLE[first]} is the same); set ${variable} to another port`,
      );
    }
    seen.set(port, listener);
  }
  const bound: T[] = [];
  try {
    for (const entry of entries) {
      await new Promise<void>((resolve, reject) => {
        const failed = (err: Error) => reject(portError(entry.listener, entry.host, entry.port, err));
        entry.server.once('error', failed);
        entry.server.listen(entry.port, entry.host, () => {
          entry.server.off('error', failed);
          resolve();
        });
      });
      bound.push(entry);
    }
  } catch (err) {
    await Promise.all(bound.map((b) => new Promise((resolve) => b.server.close(resolve))));
    throw err;
  }
  return bound;
}

/**
 * Connections that arrive before their service exists: held paused (at most `max`; more are
 * closed) and handed over once it does, so an early client waits instead of being refused.
 */
export function holdConnections(max = 512): {
  hold(socket: Socket): void;
  release(to: (socket: Socket) => void): void;
  close(): void;
} {
  let held: Socket[] | undefined = [];
  return {
    hold(socket) {
      if (!held || held.length >= max) {
        socket.destroy();
        return;
      }
      held.push(socket);
      socket.once('close', () => {
        if (held) held = held.filter((s) => s !== socket);
      });
    },
    release(to) {
      const waiting = held ?? [];
      held = undefined;
      for (const socket of waiting) if (!socket.destroyed) to(socket);
    },
    close() {
      for (const socket of held ?? []) socket.destroy();
      held = undefined;
    },
  };
}

/** A plain TCP server whose connections arrive paused (the cluster's primary, server.ts). */
export function pausedServer(onConnection: (socket: Socket) => void): Server {
  return createServer({ pauseOnConnect: true }, onConnection);
}

/**
 * Checks that every port is free by binding it and letting it go at once: what main.ts does
 * before it loads the services (a second or more), which then bind them for good.
 */
export async function probePorts(
  ports: Array<{ listener: Listener; host: string; port: number }>,
): Promise<void> {
  const bound = await bindAll(
    ports.filter((p) => p.port !== 0).map((p) => ({ ...p, server: createServer() })),
  );
  await Promise.all(bound.map((b) => new Promise((resolve) => b.server.close(resolve))));
}
