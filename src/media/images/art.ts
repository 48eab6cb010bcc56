// The built-in image engine's painter: a landscape read from the prompt's words (time of day,
// terrain, weather, named colours), drawn procedurally from a seeded PRNG, so the same prompt and
// seed give the same pixels on every machine. Not a diffusion model: an honest, recognisable
// picture of what the prompt names, in the requested size.
import { fnv1a32, mulberry32 } from '../../platform/prng.ts';
import { describeScene, readScene, type Rgb, type Scene, type Time } from './scene.ts';

export interface PaintOptions {
  width: number;
  height: number;
  /** Any integer; image i of a request uses seed + i. */
  seed: number;
  /** Fine detail (more noise octaves, more stars, more trees). */
  quality: 'low' | 'medium' | 'high';
  /** Muted colours instead of saturated ones. */
  natural: boolean;
  /** Leave the sky transparent (alpha 0) rather than painting it. */
  transparent: boolean;
}

export interface Painting {
  /** width * height * 4 bytes, RGBA, rows top to bottom. */
  rgba: Uint8Array;
  /** What was drawn, in words (the `revised_prompt`). */
  description: string;
  /** Whether any pixel is not fully opaque. */
  hasAlpha: boolean;
}

const clamp = (x: number): number => (x < 0 ? 0 : x > 255 ? 255 : x);
const mix = (a: Rgb, b: Rgb, t: number): Rgb => [
  a[0] + (b[0] - a[0]) * t,
  a[1] + (b[1] - a[1]) * t,
  a[2] + (b[2] - a[2]) * t,
];
const shade = (c: Rgb, k: number): Rgb => [c[0] * k, c[1] * k, c[2] * k];

/** Smooth 2-D value noise from a seeded lattice. */
class Noise {
  readonly #perm: Uint8Array;
  readonly #values: Float32Array;

  constructor(random: () => number) {
    this.#perm = new Uint8Array(512);
    this.#values = new Float32Array(256);
    const p = Array.from({ length: 256 }, (_, i) => i);
    for (let i = 255; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [p[i], p[j]] = [p[j] as number, p[i] as number];
    }
    for (let i = 0; i < 512; i++) this.#perm[i] = p[i & 255] as number;
    for (let i = 0; i < 256; i++) this.#values[i] = random();
  }

  #at(x: number, y: number): number {
    return this.#values[this.#perm[(this.#perm[x & 255] as number) + (y & 255)] as number] as number;
  }

  /** In [0, 1). */
  value(x: number, y: number): number {
    const xi = Math.floor(x);
    const yi = Math.floor(y);
    const xf = x - xi;
    const yf = y - yi;
    const u = xf * xf * (3 - 2 * xf);
    const v = yf * yf * (3 - 2 * yf);
    const a = this.#at(xi, yi);
    const b = this.#at(xi + 1, yi);
    const c = this.#at(xi, yi + 1);
    const d = this.#at(xi + 1, yi + 1);
    return a + (b - a) * u + (c - a) * v + (a - b - c + d) * u * v;
  }

  /** Fractal sum of `octaves` layers, in [0, 1). */
  fbm(x: number, y: number, octaves: number): number {
    let sum = 0;
    let amp = 0.5;
    let norm = 0;
    let f = 1;
    for (let o = 0; o < octaves; o++) {
      sum += amp * this.value(x * f, y * f);
      norm += amp;
      amp *= 0.5;
      f *= 2;
    }
    return sum / norm;
  }
}

interface Palette {
  skyTop: Rgb;
  skyHorizon: Rgb;
  sun: Rgb;
  far: Rgb;
  near: Rgb;
  ground: Rgb;
  water: Rgb;
  accent: Rgb;
}

function palette(scene: Scene, natural: boolean, random: () => number): Palette {
  const base: Record<Time, Palette> = {
    day: {
      skyTop: [58, 120, 210],
      skyHorizon: [176, 214, 240],
      sun: [255, 250, 220],
      far: [110, 140, 170],
      near: [70, 120, 70],
      ground: [92, 150, 74],
      water: [40, 100, 170],
      accent: [250, 240, 200],
    },
    sunrise: {
      skyTop: [92, 110, 190],
      skyHorizon: [255, 190, 130],
      sun: [255, 236, 170],
      far: [150, 120, 150],
      near: [90, 90, 110],
      ground: [110, 120, 80],
      water: [120, 120, 170],
      accent: [255, 200, 120],
    },
    sunset: {
      skyTop: [70, 50, 120],
      skyHorizon: [250, 120, 70],
      sun: [255, 210, 120],
      far: [120, 70, 100],
      near: [60, 40, 70],
      ground: [80, 60, 60],
      water: [110, 60, 100],
      accent: [255, 160, 80],
    },
    night: {
      skyTop: [6, 10, 32],
      skyHorizon: [30, 44, 90],
      sun: [235, 235, 215],
      far: [30, 40, 70],
      near: [16, 22, 40],
      ground: [20, 30, 36],
      water: [14, 24, 54],
      accent: [255, 214, 120],
    },
  };
  const p = { ...base[scene.time] };
  if (scene.terrain === 'desert') {
    p.ground = [214, 170, 110];
    p.near = [190, 140, 90];
    p.far = [200, 160, 130];
    if (scene.time === 'night') p.ground = shade(p.ground, 0.3);
  }
  if (scene.snow) {
    p.ground = scene.time === 'night' ? [90, 100, 130] : [236, 240, 248];
    p.near = mix(p.near, [220, 226, 236], 0.5);
  }
  if (scene.rain || scene.fog) {
    p.skyTop = mix(p.skyTop, [120, 126, 136], 0.6);
    p.skyHorizon = mix(p.skyHorizon, [170, 174, 180], 0.6);
  }
  // Named colours tint the sky, the land and the accents, in the order named.
  const named = scene.colours.map((c) => c.rgb);
  if (named[0]) {
    p.accent = named[0];
    p.skyHorizon = mix(p.skyHorizon, named[0], 0.45);
    p.water = mix(p.water, named[0], 0.3);
  }
  if (named[1]) {
    p.skyTop = mix(p.skyTop, named[1], 0.4);
    p.far = mix(p.far, named[1], 0.35);
  }
  if (named[2]) p.ground = mix(p.ground, named[2], 0.4);
  // A small seeded shift, so two seeds of one prompt differ in hue too.
  const jitter = (c: Rgb): Rgb => [
    c[0] + (random() - 0.5) * 24,
    c[1] + (random() - 0.5) * 24,
    c[2] + (random() - 0.5) * 24,
  ];
  for (const key of Object.keys(p) as (keyof Palette)[]) p[key] = jitter(p[key]);
  if (natural) {
    for (const key of Object.keys(p) as (keyof Palette)[]) {
      const c = p[key];
      const grey = (c[0] + c[1] + c[2]) / 3;
      p[key] = mix(c, [grey, grey, grey], 0.35);
    }
  }
  return p;
}

/** Paints the scene of `prompt`. */
export function paint(prompt: string, options: PaintOptions): Painting {
  const { width: w, height: h } = options;
  const random = mulberry32(fnv1a32(`${prompt}\u0000${options.seed}`));
  const scene = readScene(prompt);
  const octaves = { low: 3, medium: 5, high: 7 }[options.quality];
  const noise = new Noise(random);
  const rgba = new Uint8Array(w * h * 4);
  const pal = palette(scene, options.natural, random);
  const scale = Math.min(w, h);
  if (scene.abstract) {
    abstractArt(rgba, w, h, scene, noise, octaves, random, options.natural);
    return { rgba, description: describeScene(scene), hasAlpha: false };
  }

  const horizon = Math.round(h * (scene.water ? 0.58 : 0.66) + (random() - 0.5) * h * 0.08);
  const sunX = w * (0.2 + random() * 0.6);
  const sunY =
    scene.time === 'day'
      ? h * (0.12 + random() * 0.15)
      : scene.time === 'night'
        ? h * (0.1 + random() * 0.18)
        : horizon - scale * (0.06 + random() * 0.08);
  const sunR = scale * (scene.time === 'night' ? 0.045 : 0.06);
  const showSun = !(scene.rain || scene.fog) || scene.time === 'night';
  // Layers from far to near: each a ridgeline and a colour, painted over the sky.
  const layers: { ridge: Float32Array; colour: Rgb; depth: number }[] = [];
  const layerCount = scene.terrain === 'mountains' ? 3 : scene.terrain === 'plain' ? 1 : 2;
  for (let l = 0; l < layerCount; l++) {
    const depth = l / Math.max(1, layerCount - 1); // 0 far .. 1 near
    const ridge = new Float32Array(w);
    const amplitude =
      scene.terrain === 'mountains'
        ? h * (0.32 - depth * 0.14)
        : scene.terrain === 'plain'
          ? h * 0.02
          : h * (0.1 - depth * 0.03);
    const frequency = scene.terrain === 'mountains' ? 3 + l * 2 : 1.5 + l;
    for (let x = 0; x < w; x++) {
      let n = noise.fbm((x / w) * frequency + l * 17.3, l * 9.1, octaves);
      if (scene.terrain === 'mountains') n = Math.pow(1 - Math.abs(n * 2 - 1), 1.5) * 0.7 + n * 0.3; // sharp ridges
      ridge[x] = horizon - amplitude * n - (scene.terrain === 'mountains' ? (1 - depth) * h * 0.02 : 0);
    }
    layers.push({ ridge, colour: mix(pal.far, pal.near, depth), depth });
  }

  const fogAt = (y: number): number => (scene.fog ? 0.55 * (1 - Math.abs(y - horizon) / h) : 0);
  const sky = (x: number, y: number): Rgb => {
    const t = Math.min(1, Math.max(0, y / Math.max(1, horizon)));
    let c = mix(pal.skyTop, pal.skyHorizon, Math.pow(t, 1.4));
    if (showSun) {
      const d = Math.hypot(x - sunX, y - sunY);
      const glow = Math.exp(-d / (sunR * (scene.time === 'night' ? 2 : 5)));
      c = mix(c, pal.sun, glow * (scene.time === 'night' ? 0.35 : 0.6));
      if (d < sunR) c = pal.sun;
    }
    if (scene.clouds || scene.rain || scene.time !== 'night') {
      const cover = scene.clouds || scene.rain ? 0.45 : 0.62;
      const n = noise.fbm(x / (scale * 0.35) + 100, y / (scale * 0.12), octaves);
      const a = Math.max(0, (n - cover) / (1 - cover)) * (scene.rain ? 1 : 0.9);
      const cloud: Rgb =
        scene.time === 'night'
          ? [60, 66, 90]
          : scene.rain
            ? [150, 154, 162]
            : mix([255, 255, 255], pal.accent, scene.time === 'day' ? 0.1 : 0.45);
      c = mix(c, cloud, Math.min(1, a * 1.6));
    }
    return c;
  };

  // Stars, as a set of pixels, before the land covers them.
  const stars = new Set<number>();
  if (scene.time === 'night') {
    const count = Math.round((w * h) / (options.quality === 'high' ? 900 : 1600));
    for (let i = 0; i < count; i++)
      stars.add(Math.floor(random() * w) + Math.floor(random() * horizon * 0.95) * w);
  }

  // Buildings: rectangles on the horizon, with lit windows by night.
  const buildings: { x0: number; x1: number; top: number; colour: Rgb; seed: number }[] = [];
  if (scene.city) {
    let x = Math.floor(random() * scale * 0.05);
    const span = scene.water ? w : w * (0.35 + random() * 0.4);
    const start = scene.water ? 0 : Math.floor(random() * (w - span));
    x += start;
    while (x < start + span) {
      const bw = Math.max(3, Math.round(scale * (0.03 + random() * 0.06)));
      const bh = scale * (0.06 + random() * (scene.terrain === 'mountains' ? 0.12 : 0.25));
      const colour =
        scene.time === 'night'
          ? mix([22, 24, 40], pal.far, 0.2)
          : mix([200, 190, 175], pal.accent, random() * 0.5);
      buildings.push({
        x0: x,
        x1: Math.min(w, x + bw),
        top: horizon - bh,
        colour: shade(colour, 0.75 + random() * 0.3),
        seed: Math.floor(random() * 1e9),
      });
      x += bw + Math.round(random() * scale * 0.01);
    }
  }

  // Trees: conifers (a triangle on a trunk) standing on the ground in front.
  const trees: { x: number; base: number; height: number; colour: Rgb }[] = [];
  if (scene.forest) {
    const count = Math.round((w / scale) * (options.quality === 'low' ? 30 : 60));
    for (let i = 0; i < count; i++) {
      const depth = random();
      const base = scene.water
        ? horizon + (random() - 0.9) * h * 0.02
        : horizon + depth * (h - horizon) * 0.85;
      const height = scale * (0.05 + depth * 0.14) * (0.7 + random() * 0.6);
      const green: Rgb = scene.snow
        ? [60, 90, 80]
        : scene.time === 'night'
          ? [14, 34, 28]
          : [34 + random() * 30, 90 + random() * 50, 40 + random() * 30];
      trees.push({ x: random() * w, base, height, colour: shade(green, 0.7 + depth * 0.4) });
    }
    trees.sort((a, b) => a.base - b.base);
  }

  const buildingAt = new Int32Array(w).fill(-1);
  buildings.forEach((b, index) => buildingAt.fill(index, b.x0, b.x1));

  let hasAlpha = false;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let c: Rgb | undefined;
      let alpha = 255;
      // land layers (far to near); the nearest that covers this pixel wins
      for (const layer of layers) {
        if (y >= (layer.ridge[x] as number)) {
          const shadeK =
            0.85 + 0.3 * noise.fbm(x / (scale * 0.05) + layer.depth * 50, y / (scale * 0.05), octaves);
          c = shade(layer.colour, shadeK);
          if (scene.snow || (scene.terrain === 'mountains' && layer.depth < 0.5)) {
            const cap = (y - (layer.ridge[x] as number)) / (h * 0.08);
            if (cap < 1 && (scene.snow || scene.time !== 'night')) c = mix([245, 248, 252], c, cap);
          }
        }
      }
      if (y >= horizon) {
        if (scene.water) {
          // mirror what is above the horizon, rippled and darkened
          const my = 2 * horizon - y - 1;
          const ripple = Math.sin(y * 0.9 + noise.value(x / 20, y / 6) * 6) * (1 + (y - horizon) / 40);
          const mx = Math.min(w - 1, Math.max(0, Math.round(x + ripple)));
          const above = my >= 0 ? skyOrLand(mx, my) : pal.skyTop;
          c = mix(
            mix(above, pal.water, 0.45 + 0.35 * ((y - horizon) / (h - horizon))),
            [255, 255, 255],
            Math.max(0, noise.value(x / 3, y) - 0.93) * 3,
          );
        } else {
          const t = (y - horizon) / Math.max(1, h - horizon);
          c = shade(
            mix(pal.ground, pal.near, 1 - t),
            0.8 + 0.35 * noise.fbm(x / (scale * 0.04), y / (scale * 0.02), octaves),
          );
          if (scene.flowers && noise.value(x / 3 + 7, y / 3) > 0.86 - t * 0.1)
            c = mix(pal.accent, [255, 255, 255], random() * 0.3);
        }
      }
      const b = buildings[buildingAt[x] as number];
      {
        if (b !== undefined && y >= b.top && y < horizon + 1) {
          c = b.colour;
          const wx = (x - b.x0) % 6;
          const wy = Math.floor(y - b.top) % 8;
          if (wx >= 2 && wx < 4 && wy >= 3 && wy < 6 && x - b.x0 > 1 && b.x1 - x > 1) {
            const lit =
              mulberry32(b.seed + Math.floor((x - b.x0) / 6) * 131 + Math.floor((y - b.top) / 8))() > 0.45;
            c = scene.time === 'night' ? (lit ? pal.accent : shade(b.colour, 0.6)) : shade(b.colour, 0.6);
          }
        }
      }
      if (c === undefined) {
        if (options.transparent) {
          alpha = 0;
          hasAlpha = true;
          c = [0, 0, 0];
        } else {
          c = sky(x, y);
          if (stars.has(x + y * w)) c = [240, 240, 230];
        }
      }
      const f = fogAt(y);
      if (f > 0 && alpha > 0) c = mix(c, [200, 204, 210], f);
      const i = (y * w + x) * 4;
      rgba[i] = clamp(c[0]);
      rgba[i + 1] = clamp(c[1]);
      rgba[i + 2] = clamp(c[2]);
      rgba[i + 3] = alpha;
    }
  }
  // trees and weather go on top
  for (const tree of trees) drawTree(rgba, w, h, tree, scene.snow);
  if (scene.snow || scene.rain) weather(rgba, w, h, scene.rain, random, options.quality);
  return { rgba, description: describeScene(scene), hasAlpha };

  function skyOrLand(x: number, y: number): Rgb {
    for (let l = layers.length - 1; l >= 0; l--) {
      const layer = layers[l] as (typeof layers)[number];
      if (y >= (layer.ridge[x] as number)) return layer.colour;
    }
    const b = buildings[buildingAt[x] as number];
    if (b !== undefined && y >= b.top) return b.colour;
    return sky(x, y);
  }
}

function drawTree(
  rgba: Uint8Array,
  w: number,
  h: number,
  tree: { x: number; base: number; height: number; colour: Rgb },
  snow: boolean,
): void {
  const half = tree.height * 0.28;
  const top = tree.base - tree.height;
  for (let y = Math.max(0, Math.floor(top)); y < Math.min(h, Math.ceil(tree.base)); y++) {
    const t = (y - top) / tree.height;
    const span = half * t;
    for (let x = Math.max(0, Math.floor(tree.x - span)); x < Math.min(w, Math.ceil(tree.x + span)); x++) {
      const i = (y * w + x) * 4;
      const light = x < tree.x ? 1.1 : 0.85;
      const c =
        snow && (y - top) % Math.max(3, Math.round(tree.height / 5)) < 2
          ? [235, 240, 245]
          : shade(tree.colour, light);
      rgba[i] = clamp(c[0] as number);
      rgba[i + 1] = clamp(c[1] as number);
      rgba[i + 2] = clamp(c[2] as number);
      rgba[i + 3] = 255;
    }
  }
  // trunk
  const trunkW = Math.max(1, Math.round(tree.height * 0.05));
  for (
    let y = Math.max(0, Math.floor(tree.base));
    y < Math.min(h, Math.ceil(tree.base + tree.height * 0.08));
    y++
  ) {
    for (
      let x = Math.max(0, Math.round(tree.x - trunkW / 2));
      x < Math.min(w, Math.round(tree.x + trunkW / 2) + 1);
      x++
    ) {
      const i = (y * w + x) * 4;
      rgba[i] = 80;
      rgba[i + 1] = 56;
      rgba[i + 2] = 40;
      rgba[i + 3] = 255;
    }
  }
}

function weather(
  rgba: Uint8Array,
  w: number,
  h: number,
  rain: boolean,
  random: () => number,
  quality: PaintOptions['quality'],
): void {
  const count = Math.round((w * h) / (quality === 'low' ? 900 : 450));
  for (let n = 0; n < count; n++) {
    const x0 = random() * w;
    const y0 = random() * h;
    if (rain) {
      const length = 6 + random() * 10;
      for (let s = 0; s < length; s++) {
        const x = Math.round(x0 + s * 0.3);
        const y = Math.round(y0 + s);
        if (x < 0 || x >= w || y < 0 || y >= h) continue;
        const i = (y * w + x) * 4;
        rgba[i] = (rgba[i] as number) * 0.6 + 200 * 0.4;
        rgba[i + 1] = (rgba[i + 1] as number) * 0.6 + 205 * 0.4;
        rgba[i + 2] = (rgba[i + 2] as number) * 0.6 + 220 * 0.4;
      }
    } else {
      const r = random() < 0.2 ? 2 : 1;
      for (let dy = -r + 1; dy < r; dy++)
        for (let dx = -r + 1; dx < r; dx++) {
          const x = Math.round(x0 + dx);
          const y = Math.round(y0 + dy);
          if (x < 0 || x >= w || y < 0 || y >= h) continue;
          const i = (y * w + x) * 4;
          rgba[i] = 250;
          rgba[i + 1] = 250;
          rgba[i + 2] = 255;
          rgba[i + 3] = 255;
        }
    }
  }
}

/** Flowing bands of the prompt's colours (or of a palette from its hash) over a noise field. */
function abstractArt(
  rgba: Uint8Array,
  w: number,
  h: number,
  scene: Scene,
  noise: Noise,
  octaves: number,
  random: () => number,
  natural: boolean,
): void {
  const colours: Rgb[] = scene.colours.map((c) => c.rgb);
  while (colours.length < 3) {
    const hue = random() * 360;
    colours.push(hsl(hue, natural ? 0.35 : 0.7, 0.35 + random() * 0.35));
  }
  const scale = Math.min(w, h);
  const bands = 3 + Math.floor(random() * 4);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const warp = noise.fbm(x / (scale * 0.4), y / (scale * 0.4), octaves);
      const v = noise.fbm(x / (scale * 0.5) + warp * 3, y / (scale * 0.5) + warp * 2, octaves) * bands;
      const k = Math.floor(v) % colours.length;
      const t = v - Math.floor(v);
      const a = colours[k] as Rgb;
      const b = colours[(k + 1) % colours.length] as Rgb;
      const c = mix(a, b, t * t * (3 - 2 * t));
      const edge = Math.abs(t - 0.5) > 0.47 ? 0.75 : 1;
      const i = (y * w + x) * 4;
      rgba[i] = clamp(c[0] * edge);
      rgba[i + 1] = clamp(c[1] * edge);
      rgba[i + 2] = clamp(c[2] * edge);
      rgba[i + 3] = 255;
    }
  }
}

function hsl(h: number, s: number, l: number): Rgb {
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return [f(0) * 255, f(8) * 255, f(4) * 255];
}
