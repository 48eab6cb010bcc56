// One instance on every core: with `WORKERS=N` (or `auto`, one per core), `node src/main.ts`
// runs N instances of the services in one process, this thread and N-1 worker threads, behind
// the same ports. This thread, the primary, listens on the ports and hands each new connection to
// the next instance in strict turn, itself included (the socket moves to the thread). Search is
// CPU-bound and JavaScript runs one thread at a time per instance, so one instance uses one core
// of the machine, however many it has; threads rather than processes because the directory's
// search index is held once, in shared memory (src/directory/memory-index/), owned by the
// primary and read by every thread, instead of once per process (1.8 GB each at a million
// listings).
//
// The instances agree as separate instances of a scale-out deployment do: PostgreSQL (PGlite is
// one instance's database) and Redis (rate limits and revocations, exact across instances).
// Without them WORKERS > 1 is refused at start-up.
//
// The primary replaces a thread that dies (an uncaught error ends its thread, not the process)
// and on SIGINT or SIGTERM asks every instance to stop (each drains its connections) and exits
// once they have. An instance's /readyz says ready once it is, and once every instance of the
// first start has been: until then the port answers 503 whichever instance takes the connection.
import type { Server, Socket } from 'node:net';
import { isMainThread, parentPort, type TransferListItem, Worker, workerData } from 'node:worker_threads';
import { bindAll, type Listener, pausedServer } from './ports.ts';

/** The services a primary listens for, with their ports (as a single instance would listen). */
export type Listeners = Array<{ service: Listener; host: string; port: number }>;

/** Messages between the primary and its threads; `connection` carries its socket. */
type ToThread =
  | { type: 'all-ready' }
  | { type: 'connection'; service: Listener; socket: Socket }
  | { type: 'answer'; id: number; error?: string }
  | { type: 'stop' };
type ToPrimary =
  { type: 'up' } | { type: 'ready' } | { type: 'ask'; id: number; kind: string; value: unknown };

/** What a thread of the cluster is started with. */
interface MemberData {
  eurusCluster: { slot: number; payload: unknown };
}

/** In a thread the primary started: its slot (1 to N-1) and what the primary gave it; else undefined. */
export function clusterMember(): { slot: number; payload: unknown } | undefined {
  if (isMainThread) return undefined;
  return (workerData as Partial<MemberData> | null)?.eurusCluster;
}

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

/** Whether every instance has been ready once (true outside a cluster). */
let peersReady = clusterMember() === undefined;

/** An instance's readiness as /readyz reports it: its own and its peers'. */
export function readyInCluster(ownReady: boolean): boolean {
  return ownReady && peersReady;
}

/** An instance as the cluster drives it (server.ts's Running). */
export interface Member {
  ready: Promise<void>;
  accept(service: Listener, socket: Socket): void;
  close(): Promise<void>;
}

const asked = new Map<number, { resolve(): void; reject(err: Error): void }>();
let lastAsk = 0;
/** In the primary: what the threads may ask (its own instance asks them directly). */
let answers: PrimaryOptions['answers'] = {};

/** In an instance of the cluster: has the primary do `kind` (one of its `answers`) with `value`. */
export function askPrimary(kind: string, value: unknown): Promise<void> {
  if (!parentPort) {
    const answer = answers[kind];
    return answer ? answer(value) : Promise.reject(new Error(`nothing answers ${kind}`));
  }
  const id = ++lastAsk;
  return new Promise((resolve, reject) => {
    asked.set(id, { resolve, reject });
    parentPort!.postMessage({ type: 'ask', id, kind, value } satisfies ToPrimary);
  });
}

/**
 * In a thread of the cluster whose services are started (handed over, see server.ts): serves the
 * connections the primary sends, tells it once `ready` settles, learns when every instance is,
 * and stops when told.
 */
export function joinCluster(member: Member): void {
  if (!clusterMember() || !parentPort) return;
  const port = parentPort;
  let stopping = false;
  port.on('message', (message: ToThread) => {
    if (message.type === 'all-ready') peersReady = true;
    else if (message.type === 'connection') member.accept(message.service, message.socket);
    else if (message.type === 'answer') {
      const waiting = asked.get(message.id);
      asked.delete(message.id);
      if (message.error === undefined) waiting?.resolve();
      else waiting?.reject(new Error(message.error));
    } else if (message.type === 'stop' && !stopping) {
      stopping = true;
      member.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    }
  });
  port.postMessage({ type: 'up' } satisfies ToPrimary);
  // a thread that failed to load stays up not ready, as a single instance does (its log says why)
  member.ready.then(
    () => port.postMessage({ type: 'ready' } satisfies ToPrimary),
    () => undefined,
  );
}

interface Log {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface PrimaryOptions {
  /** The script each thread runs (main.ts), which calls `joinCluster`. */
  script: URL;
  /** What a thread is given (besides its slot). */
  payload: unknown;
  /** What threads may ask of the primary (`askPrimary`), by kind. */
  answers: Record<string, (value: unknown) => Promise<void>>;
  /** Starts this thread's own instance (handed over), once the ports are bound. */
  startLocal: () => Promise<Member>;
  /** Young generation of each thread's heap (MiB); V8's default (or the flags') when undefined. */
  youngGenerationMb?: number | undefined;
}

/** Connections the primary holds while no instance is up yet (more are closed). */
const MAX_HELD = 512;

/** One instance of the turn: this thread's own, or a worker thread. */
interface Instance {
  slot: number;
  accept(service: Listener, socket: Socket): boolean;
}

/**
 * In the primary: listens on the services' ports (a taken one rejects with a PortError before
 * any instance starts), starts `count - 1` threads running `options.script` and an instance of
 * its own, and hands each connection to the next instance up, in turn (holding those that come
 * before the first is up); replaces a thread that dies (unless the last five deaths came within
 * ten seconds: then it gives up, stops the rest and exits 1), and stops them all on SIGINT or
 * SIGTERM.
 */
export async function runPrimary(
  count: number,
  listeners: Listeners,
  log: Log,
  options: PrimaryOptions,
): Promise<void> {
  peersReady = false;
  answers = options.answers;
  const ready = new Set<number>();
  const up: Instance[] = [];
  const threads = new Map<number, Worker>();
  let local: Member | undefined = undefined;
  let turn = 0;
  let allReadyOnce = false;
  let stopping = false;
  const deaths: number[] = [];
  const held: Array<{ service: Listener; socket: Socket }> = [];

  /** Hands `socket` to the next instance up; one whose thread just ended refuses: the next one. */
  const hand = (service: Listener, socket: Socket, tries: number): void => {
    if (up.length === 0 && !stopping && held.length < MAX_HELD) {
      held.push({ service, socket });
      return;
    }
    const instance = up[turn++ % up.length];
    if (!instance || stopping || tries <= 0) {
      socket.destroy();
      return;
    }
    if (!instance.accept(service, socket)) hand(service, socket, tries - 1);
  };

  const markReady = (slot: number) => {
    ready.add(slot);
    if (allReadyOnce) {
      threads.get(slot)?.postMessage({ type: 'all-ready' } satisfies ToThread);
      return;
    }
    if (ready.size < count) return;
    allReadyOnce = true;
    peersReady = true;
    log.info({ workers: count }, 'every worker is ready');
    for (const thread of threads.values()) thread.postMessage({ type: 'all-ready' } satisfies ToThread);
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

  const join = (instance: Instance) => {
    up.push(instance);
    for (const { service, socket } of held.splice(0)) if (!socket.destroyed) hand(service, socket, up.length);
  };
  const leave = (slot: number) => {
    const at = up.findIndex((i) => i.slot === slot);
    if (at >= 0) up.splice(at, 1);
  };

  const start = (slot: number): void => {
    const thread = new Worker(options.script, {
      name: `eurus-worker-${slot}`, // the thread's name in ps and /proc
      workerData: { eurusCluster: { slot, payload: options.payload } } satisfies MemberData,
      ...(options.youngGenerationMb === undefined
        ? {}
        : { resourceLimits: { maxYoungGenerationSizeMb: options.youngGenerationMb } }),
    });
    threads.set(slot, thread);
    const instance: Instance = {
      slot,
      accept(service, socket) {
        try {
          thread.postMessage({ type: 'connection', service, socket } satisfies ToThread, [
            socket as unknown as TransferListItem,
          ]);
          return true;
        } catch {
          leave(slot);
          return false;
        }
      },
    };
    thread.on('message', (message: ToPrimary) => {
      if (message.type === 'up') join(instance);
      else if (message.type === 'ready') markReady(slot);
      else if (message.type === 'ask') {
        const answer = options.answers[message.kind];
        const reply = (error?: string) =>
          thread.postMessage({ type: 'answer', id: message.id, ...(error === undefined ? {} : { error }) });
        if (!answer) reply(`nothing answers ${message.kind}`);
        else
          answer(message.value).then(
            () => reply(),
            (err: unknown) => reply(String(err)),
          );
      }
    });
    thread.on('error', (err) => log.error({ err, slot }, 'a worker failed'));
    thread.on('exit', (code) => {
      threads.delete(slot);
      ready.delete(slot);
      leave(slot);
      if (stopping) return;
      const now = Date.now();
      deaths.push(now);
      while (deaths.length > 5) deaths.shift();
      log.error({ slot, code }, 'a worker died');
      if (deaths.length === 5 && now - deaths[0]! < 10_000) {
        log.error({ deaths: 5, within_ms: now - deaths[0]! }, 'workers keep dying: stopping');
        stopAll(1);
        return;
      }
      start(slot);
    });
  };

  const stopAll = (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const server of servers) server.close();
    for (const { socket } of held.splice(0)) socket.destroy();
    let failed = false;
    // each instance drains its connections for up to 10 s (server.ts); past 30 s they are ended
    const force = setTimeout(() => {
      for (const thread of threads.values()) void thread.terminate();
      process.exit(code || 1);
    }, 30_000);
    force.unref();
    const ends = [...threads.values()].map(
      (thread) =>
        new Promise<void>((resolve) => {
          thread.once('exit', (exitCode) => {
            if (exitCode !== 0) failed = true;
            resolve();
          });
          thread.postMessage({ type: 'stop' } satisfies ToThread);
        }),
    );
    const own = local ? local.close().catch(() => (failed = true)) : Promise.resolve();
    void Promise.all([own, ...ends]).then(() => process.exit(code || (failed ? 1 : 0)));
  };

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) process.exit(1);
      stopAll(0);
    });
  }
  log.info({ workers: count }, 'starting workers');
  for (let slot = 1; slot < count; slot++) start(slot);
  local = await options.startLocal();
  const own = local;
  join({
    slot: 0,
    accept(service, socket) {
      own.accept(service, socket);
      return true;
    },
  });
  own.ready.then(
    () => markReady(0),
    () => undefined,
  );
}
