// POST /v1/images/generations (imagine) and the signed image URLs it hands out
// (GET /v1/images/files/{image_id}). Billed per image; one usage record per call.
import type { CreateImageData, ImagesResponse } from '../../generated/model/client/types.gen.ts';
import type { Limiter } from '../limits/limiter.ts';
import { takeMediaUnits } from '../limits/middleware.ts';
import type { LimitSettings } from '../limits/policies.ts';
import type { ImageEngine, ImageRequest } from '../media/engines.ts';
import { CONTENT_TYPES, type ImageFormat } from '../media/images/image-formats.ts';
import type { MediaStore } from '../media/store.ts';
import type { Db } from '../platform/db.ts';
import { BadRequestError } from '../platform/errors.ts';
import { watchDisconnect } from '../platform/disconnect.ts';
import type { Logger } from '../platform/logger.ts';
import { formatEur, recordUsage } from '../platform/metering.ts';
import { SENT, operationRouter, type OperationRouter } from '../platform/route.ts';
import { imagesCostNano } from './catalogue.ts';
import { nowSeconds } from '../platform/clock.ts';

export interface ImagesDeps {
  db: Db;
  limiter: Limiter;
  /** The plans' limits and their overrides (MODEL_IMAGES_PER_MINUTE, MODEL_AUDIO_SECONDS_PER_MINUTE). */
  limits: LimitSettings;
  engine: ImageEngine;
  store: MediaStore;
  logger: Logger;
  /**
   * The origin of image URLs: MODEL_API_PUBLIC_URL, else the address this service listens on;
   * never the request's Host, which whoever sends the request chooses.
   */
  publicUrl: () => string;
}

export const IMAGE_SIZES: Record<string, [number, number]> = {
  auto: [1024, 1024],
  '256x256': [256, 256],
  '512x512': [512, 512],
  '1024x1024': [1024, 1024],
  '1536x1024': [1536, 1024],
  '1024x1536': [1024, 1536],
  '1792x1024': [1792, 1024],
  '1024x1792': [1024, 1792],
};

const QUALITY_SHOWN = { low: 'low', medium: 'medium', high: 'high', standard: 'medium', hd: 'high' } as const;

/** The request as the engine takes it, after the checks JSON Schema cannot state. */
export function imageRequest(body: CreateImageData['body']): ImageRequest {
  const size = body.size ?? 'auto';
  const dims = IMAGE_SIZES[size];
  if (dims === undefined) {
    throw new BadRequestError(
      'unsupported_size',
      `imagine makes ${Object.keys(IMAGE_SIZES).join(', ')}, not ${size}.`,
      { param: 'size' },
    );
  }
  const format = body.output_format ?? 'png';
  const transparent = body.background === 'transparent';
  if (transparent && format === 'jpeg') {
    throw new BadRequestError(
      'transparency_unsupported',
      'A jpeg has no alpha channel: ask for output_format png or webp with background transparent.',
      { param: 'background' },
    );
  }
  const quality =
    body.quality === undefined || body.quality === null || body.quality === 'auto' ? 'medium' : body.quality;
  return {
    prompt: body.prompt,
    n: body.n ?? 1,
    width: dims[0],
    height: dims[1],
    quality,
    format,
    compression: body.output_compression ?? undefined,
    transparent,
    style: body.style ?? 'vivid',
    seed: body.seed ?? undefined,
    user: body.user,
  };
}

export function createImagesRouter(deps: ImagesDeps) {
  const api: OperationRouter = operationRouter();
  api.on('createImage', async ({ body, res, principal: caller }) => {
    const started = Date.now();
    const request = imageRequest(body);
    const principal = caller();
    await takeMediaUnits(deps.limiter, deps.limits, res, principal, 'imagine', 'images', request.n);
    const client = watchDisconnect(res);
    const bill = async (status: number, images: number) => {
      await recordUsage(deps.db, principal, {
        service: 'model',
        model: 'imagine',
        endpoint: '/v1/images/generations',
        images,
        costNano: status === 200 ? imagesCostNano(images) : 0,
        status,
        latencyMs: Date.now() - started,
      }).catch((err: unknown) => deps.logger.error({ err }, 'usage record failed'));
    };
    const origin = deps.publicUrl();
    const data: ImagesResponse['data'] = [];
    try {
      for await (const image of deps.engine.generate(request, client.signal)) {
        const item: ImagesResponse['data'][number] =
          (body.response_format ?? 'url') === 'url'
            ? {
                url:
                  origin +
                  (await deps.store.put(principal, CONTENT_TYPES[request.format], image.bytes, started)),
              }
            : { b64_json: image.bytes.toString('base64') };
        if (image.revisedPrompt !== undefined) item.revised_prompt = image.revisedPrompt;
        data.push(item);
      }
    } catch (err) {
      await bill(client.statusOf(err), 0);
      if (client.left) return SENT;
      throw err;
    }
    await bill(200, data.length);
    return {
      status: 200,
      body: {
        created: Math.floor(started / 1000),
        data,
        background: request.transparent ? 'transparent' : 'opaque',
        output_format: request.format,
        quality: QUALITY_SHOWN[request.quality],
        size: `${request.width}x${request.height}`,
        usage: { images: data.length, cost_eur: formatEur(imagesCostNano(data.length)), currency: 'EUR' },
      },
    };
  });
  api.on('getImageFile', async ({ path, query }) => {
    const image = await deps.store.get(path.image_id, Number(query.expires), query.signature);
    const maxAge = Math.max(0, image.expires - nowSeconds());
    return {
      status: 200,
      body: new Uint8Array(image.bytes.buffer, image.bytes.byteOffset, image.bytes.byteLength),
      type: image.contentType,
      headers: { 'Cache-Control': `private, max-age=${maxAge}` },
    };
  });
  return api;
}

export type { ImageFormat };
