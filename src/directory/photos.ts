// Photos of claimed listings, served by us as JPEG. The demo's photos are drawn on request
// from their id (a street scene in the listing's colours: sky, facades, windows, a door) and
// encoded with jpeg-js (pure JavaScript), so the same id always gives the same image.
import jpeg from 'jpeg-js';
import { LRUCache } from 'lru-cache';
import { fnv1a32, mulberry32 } from '../platform/prng.ts';

const rng = (seed: string) => mulberry32(fnv1a32(seed));

/** The photos drawn last (a JPEG takes some milliseconds to encode). */
const cache = new LRUCache<string, Buffer>({ max: 64 });

/** The JPEG of photo `id` at `width` x `height`, deterministic. */
export function renderPhoto(id: string, width: number, height: number): Buffer {
  const key = `${id}:${width}x${height}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const r = rng(id);
  const data = Buffer.alloc(width * height * 4);
  const skyTop = [90 + r() * 60, 140 + r() * 60, 200 + r() * 55];
  const horizon = Math.floor(height * (0.35 + r() * 0.2));
  const set = (x: number, y: number, c: number[]) => {
    const o = (y * width + x) * 4;
    data[o] = c[0] ?? 0;
    data[o + 1] = c[1] ?? 0;
    data[o + 2] = c[2] ?? 0;
    data[o + 3] = 255;
  };
  for (let y = 0; y < height; y++) {
    const t = y / height;
    const row = y < horizon ? skyTop.map((v) => v + t * 60) : [110 - t * 30, 105 - t * 30, 100 - t * 30];
    for (let x = 0; x < width; x++) set(x, y, row);
  }
  // facades along the street, each with a grid of windows and a door
  let x = 0;
  while (x < width) {
    const w = Math.floor(width * (0.15 + r() * 0.2));
    const top = Math.floor(horizon * (0.3 + r() * 0.6));
    const bottom = Math.floor(height * 0.88);
    const wall = [150 + r() * 100, 120 + r() * 100, 90 + r() * 100];
    const win = [40 + r() * 40, 60 + r() * 40, 80 + r() * 40];
    for (let y = top; y < bottom; y++) {
      for (let xx = x; xx < Math.min(width, x + w); xx++) {
        const wx = (xx - x) % 40;
        const wy = (y - top) % 50;
        const isWindow = wx > 10 && wx < 30 && wy > 12 && wy < 38 && y < bottom - 60;
        const isDoor = xx - x > w / 2 - 15 && xx - x < w / 2 + 15 && y > bottom - 60;
        set(xx, y, isWindow || isDoor ? win : wall);
      }
    }
    x += w + Math.floor(r() * 6);
  }
  const jpegData = jpeg.encode({ data, width, height }, 80).data;
  const out = Buffer.from(jpegData);
  cache.set(key, out);
  return out;
}
