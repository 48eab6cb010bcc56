// Revocation fan-out: when a key is revoked or rotated, every instance drops it from its
// cache at once. In one process an EventEmitter suffices; with REDIS_URL, Redis pub/sub.
import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';

export interface Bus {
  publish(keyId: string): Promise<void>;
  subscribe(listener: (keyId: string) => void): void;
  close(): Promise<void>;
}

const CHANNEL = 'keys:invalidate';

export function memoryBus(): Bus {
  const emitter = new EventEmitter();
  return {
    publish: async (keyId) => void emitter.emit(CHANNEL, keyId),
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
    publish: async (keyId) => void (await pub.publish(CHANNEL, keyId)),
    subscribe: (listener) => void listeners.push(listener),
    close: async () => void (await Promise.all([pub.quit(), sub.quit()])),
  };
}
