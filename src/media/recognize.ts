// The built-in recognizer: CMU PocketSphinx (Debian's `pocketsphinx`, BSD-2-Clause) with its US
// English acoustic model, language model and dictionary (`pocketsphinx-en-us`), run as a separate
// process on a 16 kHz 16-bit WAV written to a temporary file (it cannot read Node's stdin, a
// socket), printing each stretch of speech (an utterance between pauses) with its words' times
// as soon as it has decoded it.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wavHeader } from './audio/decode.ts';
import { ApiError } from '../platform/errors.ts';
import { engineUnavailable } from './speech.ts';
import { type Child, findTool, Semaphore, startTool } from './audio/programs.ts';

export const RECOGNIZER_RATE = 16_000;
export const DEFAULT_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

export interface RecognizedWord {
  word: string;
  start: number;
  end: number;
  /** The recognizer's posterior probability of the word, 0 to 1. */
  confidence: number;
}

export interface Utterance {
  text: string;
  /** The language heard, when the engine says (an upstream's `language`, a code or a name). */
  language?: string;
  start: number;
  end: number;
  words: RecognizedWord[];
}

export interface Recognizer {
  readonly available: boolean;
  /** Recognizes 16 kHz mono samples; yields each utterance as it is decoded. */
  recognize(samples: Int16Array, signal?: AbortSignal): AsyncGenerator<Utterance>;
}

const WORD_LINE = /^(\S+) (\d+\.\d+) (\d+\.\d+) (-?\d+(?:\.\d+)?)$/;
const FILLERS = /^(<s>|<\/s>|<sil>|\[[A-Z]+\]|\+\+.*\+\+)$/;

/** Parses PocketSphinx's `-time yes` lines: a hypothesis line, then one line per word. */
export class UtteranceParser {
  #current: Utterance | undefined;
  #pending = '';

  /** Feeds text; returns the utterances it completed (an utterance ends at its `</s>`). */
  push(text: string): Utterance[] {
    this.#pending += text;
    const lines = this.#pending.split('\n');
    this.#pending = lines.pop() ?? '';
    const done: Utterance[] = [];
    for (const raw of lines) {
      const line = raw.trim();
      const word = WORD_LINE.exec(line);
      if (word === null) {
        if (this.#current && this.#current.words.length > 0) done.push(this.#current);
        this.#current = { text: line, start: 0, end: 0, words: [] };
        continue;
      }
      const [, token = '', start = '0', end = '0', conf = '0'] = word;
      this.#current ??= { text: '', start: 0, end: 0, words: [] };
      if (token === '</s>') {
        const u = this.#current;
        const words = u.words;
        if (words.length > 0)
          done.push({
            ...u,
            start: (words[0] as RecognizedWord).start,
            end: (words.at(-1) as RecognizedWord).end,
          });
        this.#current = undefined;
        continue;
      }
      if (FILLERS.test(token)) continue;
      this.#current.words.push({
        word: token.replace(/\(\d+\)$/, ''),
        start: Number(start),
        end: Number(end),
        confidence: Math.max(0, Math.min(1, Number(conf))),
      });
    }
    return done;
  }

  end(): Utterance[] {
    const rest = this.push('\n');
    const u = this.#current;
    this.#current = undefined;
    if (u && u.words.length > 0)
      rest.push({
        ...u,
        start: (u.words[0] as RecognizedWord).start,
        end: (u.words.at(-1) as RecognizedWord).end,
      });
    return rest;
  }
}

export function pocketsphinxRecognizer(modelDir = DEFAULT_MODEL_DIR, concurrency = 2): Recognizer {
  const path = findTool('pocketsphinx_continuous');
  const stdbuf = findTool('stdbuf');
  const model = {
    hmm: join(modelDir, 'en-us'),
    lm: join(modelDir, 'en-us.lm.bin'),
    dict: join(modelDir, 'cmudict-en-us.dict'),
  };
  const available =
    path !== undefined && existsSync(model.hmm) && existsSync(model.lm) && existsSync(model.dict);
  const slots = new Semaphore(concurrency, 32);
  return {
    available,
    async *recognize(samples, signal) {
      if (!available || path === undefined)
        throw engineUnavailable('speech recognition', 'Debian packages pocketsphinx and pocketsphinx-en-us');
      const release = await slots.acquire('speech recognition', signal);
      let dir: string | undefined;
      let child: Child | undefined;
      try {
        dir = await mkdtemp(join(tmpdir(), 'eurus-stt-'));
        const file = join(dir, 'audio.wav');
        // 1 s of silence after the end, so the recognizer's voice detection closes the last utterance
        const bytes = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
        const tail = Buffer.alloc(RECOGNIZER_RATE * 2);
        await writeFile(
          file,
          Buffer.concat([wavHeader(RECOGNIZER_RATE, bytes.length + tail.length), bytes, tail]),
        );
        const args = [
          '-infile',
          file,
          '-hmm',
          model.hmm,
          '-lm',
          model.lm,
          '-dict',
          model.dict,
          '-time',
          'yes',
          '-logfn',
          '/dev/null',
        ];
        // line-buffered stdout (stdbuf), so each utterance arrives when it is decoded, not at exit
        const started = stdbuf
          ? startTool(stdbuf, ['-oL', path, ...args], { timeoutMs: 30 * 60_000, signal })
          : startTool(path, args, { timeoutMs: 30 * 60_000, signal });
        child = started.child;
        const done = started.done;
        child.stdin.end();
        const parser = new UtteranceParser();
        child.stdout.setEncoding('utf8');
        for await (const text of child.stdout as AsyncIterable<string>) yield* parser.push(text);
        yield* parser.end();
        const { code, stderr } = await done;
        if (signal?.aborted) throw signal.reason as Error;
        if (code !== 0)
          throw new ApiError(
            500,
            'engine_failed',
            `PocketSphinx failed (exit ${code}): ${stderr.trim().slice(0, 200)}`,
          );
      } finally {
        if (child !== undefined && child.exitCode === null) child.kill('SIGKILL');
        release();
        if (dir !== undefined) await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

/** PocketSphinx's lower-case words as a sentence: a capital first letter, `I`, a full stop. */
export function asSentence(text: string): string {
  const words = text
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => (w === 'i' || w.startsWith("i'") ? `I${w.slice(1)}` : w));
  if (words.length === 0) return '';
  const joined = words.join(' ');
  return `${joined[0]?.toUpperCase()}${joined.slice(1)}.`;
}
