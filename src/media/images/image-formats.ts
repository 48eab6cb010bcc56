// Image bytes from painted pixels: PNG (pngjs), JPEG (jpeg-js), WebP (libwebp in WebAssembly,
// @jsquash/webp). All pure JavaScript or WebAssembly: no native addon.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';

export type ImageFormat = 'png' | 'jpeg' | 'webp';

export const CONTENT_TYPES: Record<ImageFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};

type WebpEncode = (
  data: { data: Uint8ClampedArray; width: number; height: number; colorSpace: 'srgb' },
  options: { quality: number; lossless?: number },
) => Promise<ArrayBuffer>;
let webp: Promise<WebpEncode> | undefined;

/** Loads the WebP encoder once, from the package's own .wasm (no fetch: Node has no file URLs for it). */
function webpEncoder(): Promise<WebpEncode> {
  webp ??= (async () => {
    const require = createRequire(import.meta.url);
    const dir = require.resolve('@jsquash/webp/package.json').replace(/package\.json$/, '');
    const module = await WebAssembly.compile(readFileSync(`${dir}codec/enc/webp_enc_simd.wasm`));
    const encoder = (await import('@jsquash/webp/encode.js')) as unknown as {
      init(module: WebAssembly.Module): Promise<unknown>;
      default: WebpEncode;
    };
    await encoder.init(module);
    return encoder.default;
  })();
  return webp;
}

/**
 * Encodes RGBA pixels. `quality` (0-100) is for jpeg and webp; a png is lossless, and RGB when
 * no pixel is transparent (a quarter smaller).
 */
export async function encodeImage(
  rgba: Uint8Array,
  width: number,
  height: number,
  format: ImageFormat,
  options: { quality?: number | undefined; alpha: boolean },
): Promise<Buffer> {
  if (format === 'png') {
    return PNG.sync.write(
      { width, height, data: Buffer.from(rgba.buffer, rgba.byteOffset, rgba.byteLength) } as PNG,
      { colorType: options.alpha ? 6 : 2, deflateLevel: 6 },
    );
  }
  if (format === 'jpeg') {
    return jpeg.encode(
      { data: Buffer.from(rgba.buffer, rgba.byteOffset, rgba.byteLength), width, height },
      options.quality ?? 90,
    ).data;
  }
  const encode = await webpEncoder();
  const out = await encode(
    {
      data: new Uint8ClampedArray(rgba.buffer, rgba.byteOffset, rgba.byteLength),
      width,
      height,
      colorSpace: 'srgb',
    },
    { quality: options.quality ?? 80 },
  );
  return Buffer.from(out);
}
