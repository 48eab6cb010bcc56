// A worker thread of the image pool: paints and encodes one image per message, off the event
// loop that serves requests.
import '../../platform/background-thread.ts'; // first: the imports below load at its priority
import { parentPort } from 'node:worker_threads';
import { paint, type PaintOptions } from './art.ts';
import { encodeImage, type ImageFormat } from './image-formats.ts';

export interface PaintJob {
  id: number;
  prompt: string;
  options: PaintOptions;
  format: ImageFormat;
  quality: number | undefined;
}

export type PaintResult =
  | { id: number; ok: true; bytes: Uint8Array; description: string }
  | { id: number; ok: false; message: string };

parentPort?.on('message', (job: PaintJob) => {
  void (async () => {
    try {
      const painting = paint(job.prompt, job.options);
      const bytes = await encodeImage(painting.rgba, job.options.width, job.options.height, job.format, {
        quality: job.quality,
        alpha: painting.hasAlpha,
      });
      const out = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const copy = out.byteOffset === 0 && out.byteLength === out.buffer.byteLength ? out : out.slice();
      parentPort?.postMessage(
        { id: job.id, ok: true, bytes: copy, description: painting.description } satisfies PaintResult,
        [copy.buffer as ArrayBuffer],
      );
    } catch (error) {
      parentPort?.postMessage({
        id: job.id,
        ok: false,
        message: (error as Error).message,
      } satisfies PaintResult);
    }
  })();
});
