// Revocation fan-out: when a key is revoked or rotated, every instance drops it from its
// cache at once. In one process an EventEmitter suffices; with REDIS_URL, Redis pub/sub.
// Pub/sub alone leaves a window: instance B may read a client's next request before the
// message. So every publish also bumps an epoch, and B reads the epoch before it trusts a cached
// key: a key revoked on A is refused by B on the very next call, whatever order B reads in.
import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';

export interface Bus {
  publish(keyId: string): Promise<void>;
  /** A number that changes whenever `publish` is called on any instance. */
  epoch(): Promise<number>;
  subscribe(listener: (keyId: string) => void): void;
  close(): Promise<void>;
}

const CHANNEL = 'keys:invalidate';
const EPOCH = 'keys:epoch';

export function memoryBus(): Bus {
  const emitter = new EventEmitter();
  let epoch = 0;
  return {
    publish: async (keyId) => {
      epoch++;
      emitter.emit(CHANNEL, keyId);
    },
    epoch: async () => epoch,
    subscribe: (listener) => void emitter.on(CHANNEL, listener),
    close: async () => void emitter.removeAllListeners(),
  };
}

export async function redisBus(url: string): Promise<Bus> {
  const pub = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  const sub = new Redis(url, { lazyConnect: true });
  await Promise.all([pub.connect(), sub.connect()]);
  const listeners: Array<(keyId: string) => void> = [];
  await sub.subscribe(CHANNEL);
  sub.on('message', (_channel: string, keyId: string) => {
    for (const listener of listeners) listener(keyId);
  });
  return {
    publish: async (keyId) => void (await pub.multi().incr(EPOCH).publish(CHANNEL, keyId).exec()),
    epoch: async () => Number((await pub.get(EPOCH)) ?? 0),
    subscribe: (listener) => void listeners.push(listener),
    close: async () => void (await Promise.all([pub.quit(), sub.quit()])),
  };
}
