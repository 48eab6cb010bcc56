// One instance on every core: with `WORKERS=N` (or `auto`, one per core), `node src/main.ts`
// starts a primary process that forks N workers, each running the services as a single
// instance would. The primary listens on the ports and hands each new connection to the next
// worker in strict turn. (node:cluster's own round robin gives a connection to whichever worker
// answered its last hand-over first: four connections opened at once went 3 and 1 as often as
// 2 and 2, and keep-alive connections stay where they landed.) Search is CPU-bound and JavaScript
// runs one thread a process, so one process uses one core of the machine, however many it has.
//
// The workers are instances of a scale-out deployment that happen to share a port, so they need
// what several instances need to agree on: PostgreSQL (PGlite is one process's
// database) and Redis (rate limits and revocations, exact across processes). Without them
// WORKERS > 1 is refused at start-up.
//
// The primary holds no database and serves nothing. It forks a new worker for one that dies,
// and on SIGINT or SIGTERM asks every worker to stop (each drains its connections) and exits
// once they have. A worker's /readyz says ready once it is, and once every worker of the first
// start has been: until then the port answers 503 whichever worker takes the connection.
import cluster, { type Worker } from 'node:cluster';
import type { Server, Socket } from 'node:net';
import { bindAll, type Listener, pausedServer } from './ports.ts';

/** The services a primary listens for, with their ports (as the workers would listen). */
export type Listeners = Array<{ service: Listener; host: string; port: number }>;

/** Messages between the primary and its workers; `connection` comes with its socket. */
type Message =
  { type: 'up' } | { type: 'ready' } | { type: 'all-ready' } | { type: 'connection'; service: Listener };

/** Why these settings cannot run several workers, or undefined when they can. */
export function whyNotWorkers(config: {
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
}): string | undefined {
  const missing = [
    ...(config.databaseUrl ? [] : ['DATABASE_URL']),
    ...(config.redisUrl ? [] : ['REDIS_URL']),
  ];
  if (missing.length === 0) return undefined;
  return (
    `WORKERS > 1 needs ${missing.join(' and ')}: workers are instances that share a port, ` +
    'so they keep their data in PostgreSQL and their limits and revocations in Redis'
  );
}

/** Whether every worker has been ready once (true outside a cluster). */
let peersReady = !cluster.isWorker;

/** A worker's readiness as /readyz reports it: its own and its peers'. */
export function readyInCluster(ownReady: boolean): boolean {
  return ownReady && peersReady;
}

/**
 * In a worker whose services are started (handed over, see server.ts): serves the connections
 * the primary sends, tells it once `ready` settles, and learns when every worker is.
 */
export function joinCluster(ready: Promise<void>, accept: (service: Listener, socket: Socket) => void): void {
  if (!cluster.isWorker) return;
  process.on('message', (message: Message, socket?: Socket) => {
    if (message.type === 'all-ready') peersReady = true;
    else if (message.type === 'connection' && socket) accept(message.service, socket);
  });
  process.send?.({ type: 'up' } satisfies Message);
  // a worker that failed to load stays up not ready, as a single instance does (its log says why)
  ready.then(
    () => process.send?.({ type: 'ready' } satisfies Message),
    () => undefined,
  );
}

interface Log {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** Connections the primary holds while no worker is up yet (more are closed). */
const MAX_HELD = 512;

/**
 * In the primary: listens on the services' ports (a taken one rejects with a PortError before
 * any worker is forked), forks `count` workers running this script with its arguments and hands
 * each connection to the next worker up, in turn (holding those that come before the first is
 * up); replaces a worker that dies (unless the last five deaths came within ten seconds: then it
 * gives up, stops the rest and exits 1), and stops them all on SIGINT or SIGTERM.
 */
export async function runPrimary(count: number, listeners: Listeners, log: Log): Promise<void> {
  const ready = new Set<number>();
  const up: Worker[] = [];
  let turn = 0;
  let allReadyOnce = false;
  let stopping = false;
  const deaths: number[] = [];
  const held: Array<{ service: Listener; socket: Socket }> = [];

  /** Hands `socket` to the next worker up; one that just died fails the send: the next one, then. */
  const hand = (service: Listener, socket: Socket, tries: number): void => {
    if (up.length === 0 && !stopping && held.length < MAX_HELD) {
      held.push({ service, socket });
      return;
    }
    const worker = up[turn++ % up.length];
    if (!worker || stopping || tries <= 0) {
      socket.destroy();
      return;
    }
    worker.send({ type: 'connection', service } satisfies Message, socket, { keepOpen: true }, (err) => {
      if (!err) {
        socket.destroy(); // the worker has its own handle now
        return;
      }
      leave(worker);
      hand(service, socket, tries - 1);
    });
  };

  /** Takes a worker out of the turn (it died, or its channel closed). */
  const leave = (worker: Worker) => {
    const at = up.indexOf(worker);
    if (at >= 0) up.splice(at, 1);
  };

  const servers: Server[] = (
    await bindAll(
      listeners.map(({ service, host, port }) => ({
        listener: service,
        host,
        port,
        server: pausedServer((socket) => hand(service, socket, up.length)),
      })),
    )
  ).map(({ listener, port, server }) => {
    server.on('error', (err) => {
      log.error({ err, service: listener, port }, 'cannot listen');
      stopAll(1);
    });
    log.info({ service: listener, port }, 'listening');
    return server;
  });

  const fork = (): Worker => {
    const worker = cluster.fork();
    worker.on('disconnect', () => leave(worker));
    worker.on('message', (message: Message) => {
      if (message.type === 'up') {
        up.push(worker);
        for (const { service, socket } of held.splice(0))
          if (!socket.destroyed) hand(service, socket, up.length);
        return;
      }
      if (message.type !== 'ready') return;
      ready.add(worker.id);
      if (allReadyOnce) {
        worker.send({ type: 'all-ready' } satisfies Message);
        return;
      }
      if (ready.size < count) return;
      allReadyOnce = true;
      log.info({ workers: count }, 'every worker is ready');
      for (const w of Object.values(cluster.workers ?? {})) w?.send({ type: 'all-ready' } satisfies Message);
    });
    return worker;
  };

  const stopAll = (code: number) => {
    stopping = true;
    for (const server of servers) server.close();
    const live = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    if (live.length === 0) process.exit(code);
    let left = live.length;
    let failed = false;
    // each worker drains its connections for up to 10 s (server.ts); past 30 s it is killed
    setTimeout(() => {
      for (const worker of live) if (!worker.isDead()) worker.process.kill('SIGKILL');
    }, 30_000).unref();
    for (const worker of live) {
      worker.once('exit', (exitCode, signal) => {
        // a worker still starting has no handler yet: SIGTERM ends it, as asked
        if (exitCode !== 0 && signal !== 'SIGTERM') failed = true;
        if (--left === 0) process.exit(code || (failed ? 1 : 0));
      });
      worker.process.kill('SIGTERM');
    }
  };

  cluster.on('exit', (worker, code, signal) => {
    ready.delete(worker.id);
    leave(worker);
    if (stopping) return;
    const now = Date.now();
    deaths.push(now);
    while (deaths.length > 5) deaths.shift();
    log.error({ pid: worker.process.pid, code, signal }, 'a worker died');
    if (deaths.length === 5 && now - deaths[0]! < 10_000) {
      log.error({ deaths: 5, within_ms: now - deaths[0]! }, 'workers keep dying: stopping');
      stopAll(1);
      return;
    }
    fork();
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) process.exit(1);
      stopAll(0);
    });
  }
  log.info({ workers: count }, 'starting workers');
  for (let i = 0; i < count; i++) fork();
}
