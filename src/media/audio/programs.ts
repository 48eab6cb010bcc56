// The Debian programs media relies on (espeak-ng, pocketsphinx, lame, flac, opusenc, ffmpeg), run
// as separate processes: found on PATH once, bounded in number (a semaphore per instance), in
// time (killed past a deadline) and in output, and killed when the request that needs them goes.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { ApiError } from '../../platform/errors.ts';

/** Where the tools are looked for: Debian's places for packaged and locally built programs. */
export const TOOL_DIRS = ['/usr/local/bin', '/usr/bin', '/bin'];

/** The absolute path of the program `name` (or `name` itself when it is a path), or undefined. */
export function findTool(name: string): string | undefined {
  if (name.includes('/')) {
    try {
      accessSync(name, constants.X_OK);
      return name;
    } catch {
      return undefined;
    }
  }
  for (const dir of TOOL_DIRS) {
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** At most `size` holders at once; others wait in line, up to `queue` of them, then a 503. */
export class Semaphore {
  #free: number;
  readonly #waiting: (() => void)[] = [];
  readonly #queue: number;

  constructor(size: number, queue: number) {
    this.#free = size;
    this.#queue = queue;
  }

  async acquire(what: string, signal?: AbortSignal): Promise<() => void> {
    if (this.#free > 0) {
      this.#free--;
      return this.#release();
    }
    if (this.#waiting.length >= this.#queue) {
      throw new ApiError(
        503,
        'engine_busy',
        `The ${what} engine is busy on this instance; retry in a few seconds.`,
        {
          headers: { 'Retry-After': '2', 'retry-after-ms': '2000' },
        },
      );
    }
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', gone);
        resolve();
      };
      const gone = () => {
        const at = this.#waiting.indexOf(go);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal?.reason as Error);
      };
      signal?.addEventListener('abort', gone, { once: true });
      this.#waiting.push(go);
    });
    return this.#release();
  }

  #release(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    };
  }
}

export type Child = ChildProcessByStdio<Writable, Readable, Readable>;

export interface RunOptions {
  /** Killed (SIGKILL) after this long. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/**
 * Starts `path` with `args` (never through a shell); its stderr is kept (last 4 KB) for the
 * error message. The caller writes stdin and reads stdout; `done` resolves with the exit code.
 */
export function startTool(
  path: string,
  args: string[],
  options: RunOptions,
): { child: Child; done: Promise<{ code: number | null; stderr: string }> } {
  const child = spawn(path, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    stderr = (stderr + text).slice(-4096);
  });
  child.stdin.on('error', () => {}); // a tool that exits early closes its stdin: EPIPE is not ours to report
  const kill = () => child.kill('SIGKILL');
  const timer = setTimeout(kill, options.timeoutMs);
  options.signal?.addEventListener('abort', kill, { once: true });
  const done = new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', kill);
      resolve({ code, stderr });
    });
  });
  done.catch(() => {});
  return { child, done };
}
