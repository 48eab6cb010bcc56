// The code blocks of a Markdown guide, and the comparison of what a block printed with the
// output the guide shows under it. Used by docs/guides.test.ts, which runs every block.
//
// Conventions a guide follows (docs/README.md says them to writers):
// - A block the docs test cannot run has, as the last line before its fence, the visible line
//   `*Not run by the docs test: <why>.*`.
// - A `json`, `text` or unlabelled block right after a runnable block (blank lines between
//   only) is that block's output, compared by `matchOutput`.
// - A runnable block whose first line is a comment naming a file (`// receiver.mjs: ...`,
//   `# webhook_receiver.py: ...`) is saved under that name for a later block to run.
// - A shell block whose first line says `runs until` (a server) is started and left running.
import { readFileSync } from 'node:fs';

export const RUNNABLE = ['sh', 'bash', 'ts', 'js', 'python'] as const;
export type RunnableLang = (typeof RUNNABLE)[number];

export interface Block {
  guide: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  /** The reason of the block's `Not run by the docs test` line. */
  notRun?: string;
  /** The block the guide shows as this block's output. */
  output?: Block;
  /** The file name the block's first comment gives it. */
  file?: string;
}

const NOT_RUN = /^\s*\*Not run by the docs test: (.+?)\*\s*$/;
const FENCE = /^(\s*)```([\w-]*)\s*$/;
const FILE_COMMENT = /^(?:\/\/|#)\s*([\w.-]+\.(?:mjs|js|ts|py))\b/;

export function isRunnable(lang: string): lang is RunnableLang {
  return (RUNNABLE as readonly string[]).includes(lang);
}

export function parseGuide(path: string, text = readFileSync(path, 'utf8')): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  let previousEnd = -1; // the line after the last closing fence
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !/^\s*```\s*$/.test(lines[j]!)) body.push(lines[j++]!.slice(indent));
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const marker = before >= 0 ? NOT_RUN.exec(lines[before]!) : null;
    const block: Block = { guide: path, line: i + 1, lang: open[2]!, code: `${body.join('\n')}\n` };
    if (marker) block.notRun = marker[1]!;
    const file = FILE_COMMENT.exec(body[0] ?? '');
    if (file && isRunnable(block.lang)) block.file = file[1]!;
    const last = blocks.at(-1);
    const adjacent = last && lines.slice(previousEnd, i).every((l) => l.trim() === '');
    if (last && adjacent && isRunnable(last.lang) && ['json', 'text', ''].includes(block.lang)) {
      last.output = block;
    }
    blocks.push(block);
    previousEnd = j + 1;
    i = j;
  }
  return blocks;
}

// --- comparing output -----------------------------------------------------------------------

/** Values that differ from run to run: ids, secrets, cursors, times. */
function variable(shown: string, actual: string): boolean {
  const prefixed = /^([a-z]+)[_-][A-Za-z0-9._/+=-]*$/;
  const a = prefixed.exec(shown);
  const b = prefixed.exec(actual);
  if (a && b && a[1] === b[1] && shown.length >= 8) return true;
  if (/^eyJ/.test(shown) && /^eyJ/.test(actual)) return true; // cursors
  const iso = /^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d)?(\.\d+)?Z?)?$/;
  return iso.test(shown) && iso.test(actual);
}

const VARIABLE_KEY =
  /(^created$|_at$|^timestamp$|_ms$|^at$|^expires$|^score$|^text_relevance$|^semantic_similarity$)/;

export interface Match {
  problems: string[];
  /** Values the guide shows that this run had otherwise: later blocks use the run's. */
  substitutions: Map<string, string>;
}

/** Compares a JSON value printed by a block with the one the guide shows (`"...": "..."` elides). */
export function matchJson(shown: unknown, actual: unknown, match: Match, path = '$', key = ''): void {
  const fail = (why: string): void => {
    match.problems.push(`${path}: ${why}`);
  };
  if (typeof shown === 'string' && typeof actual === 'string') {
    if (shown === actual) return;
    if (variable(shown, actual)) {
      match.substitutions.set(shown, actual);
      return;
    }
    if (shown === '...' || (shown.endsWith('...') && actual.startsWith(shown.slice(0, -3)))) return;
    return fail(`the guide shows ${JSON.stringify(shown)}, the run printed ${JSON.stringify(actual)}`);
  }
  if (typeof shown === 'number' && typeof actual === 'number') {
    if (shown === actual || VARIABLE_KEY.test(key) || (shown > 1e9 && actual > 1e9)) return;
    return fail(`the guide shows ${shown}, the run printed ${actual}`);
  }
  if (Array.isArray(shown) && Array.isArray(actual)) {
    const elided = shown.at(-1) === '...';
    const items = elided ? shown.slice(0, -1) : shown;
    if (elided ? actual.length < items.length : actual.length !== items.length) {
      return fail(
        `the guide shows ${items.length}${elided ? ' or more' : ''} items, the run printed ${actual.length}`,
      );
    }
    items.forEach((item, i) => matchJson(item, actual[i], match, `${path}[${i}]`, key));
    return;
  }
  if (isObject(shown) && isObject(actual)) {
    const elided = '...' in shown;
    for (const [k, v] of Object.entries(shown)) {
      if (k === '...') continue;
      if (!(k in actual)) fail(`the guide shows "${k}", the run printed no such field`);
      else matchJson(v, actual[k], match, `${path}.${k}`, k);
    }
    if (!elided) {
      const extra = Object.keys(actual).filter((k) => !(k in shown));
      if (extra.length) fail(`the run printed fields the guide does not show: ${extra.join(', ')}`);
    }
    return;
  }
  if (shown === actual) return;
  if (
    VARIABLE_KEY.test(key) &&
    (typeof shown === 'number' || shown === null) &&
    (typeof actual === 'number' || actual === null)
  )
    return;
  fail(`the guide shows ${JSON.stringify(shown)}, the run printed ${JSON.stringify(actual)}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every JSON value in `text`, one after another (jq prints several). */
export function jsonValues(text: string): unknown[] | undefined {
  const values: unknown[] = [];
  let rest = text.trim();
  while (rest !== '') {
    let parsed = false;
    // the shortest prefix that parses, ending at a line end
    for (let end = rest.indexOf('\n'); ; end = rest.indexOf('\n', end + 1)) {
      const piece = end < 0 ? rest : rest.slice(0, end);
      try {
        values.push(JSON.parse(piece));
        rest = end < 0 ? '' : rest.slice(end + 1).trim();
        parsed = true;
        break;
      } catch {
        if (end < 0) break;
      }
    }
    if (!parsed) return undefined;
  }
  return values;
}

/** A line of text output, with what varies between runs made alike. */
function normalLine(line: string): string {
  return line
    .replace(/\b([a-z]+)[_-][0-9A-HJKMNP-TV-Z]{26}\b/g, '$1_<id>')
    .replace(/\b\d{4}-\d\d-\d\d\b/g, '<date>') // dates: guides write them relative to the day they run
    .replace(/\b\d+ ms\b/g, '<n> ms')
    .replace(/\b\d+\.\d{9}\b/g, '<amount>')
    .trimEnd();
}

/**
 * Compares printed text with the text the guide shows: line by line, a line `...` skips any
 * number of lines, ids and durations may differ, and SSE `data: {...}` lines compare as JSON.
 */
export function matchText(shown: string, actual: string, match: Match): void {
  const want = shown.split('\n').filter((l) => l.trim() !== '');
  const got = actual.split('\n').filter((l) => l.trim() !== '');
  let g = 0;
  for (let w = 0; w < want.length; w++) {
    const line = want[w]!;
    if (line.trim() === '...') {
      const rest = want.slice(w + 1);
      if (rest.length === 0) return;
      // the last "...": what follows it is the end of the output
      if (!rest.some((l) => l.trim() === '...')) g = Math.max(g, got.length - rest.length);
      else while (g < got.length && !sameLine(rest[0]!, got[g]!, match)) g++;
      continue;
    }
    if (g >= got.length)
      return void match.problems.push(`the run printed no line for ${JSON.stringify(line)}`);
    if (!sameLine(line, got[g]!, match, true)) {
      return void match.problems.push(
        `line ${g + 1}: the guide shows ${JSON.stringify(line)}, the run printed ${JSON.stringify(got[g])}`,
      );
    }
    g++;
  }
  if (g < got.length)
    match.problems.push(`the run printed ${got.length - g} more lines than the guide shows`);
}

function sameLine(shown: string, actual: string, match: Match, record = false): boolean {
  if (shown.startsWith('data: {') && actual.startsWith('data: {')) {
    const probe: Match = { problems: [], substitutions: new Map() };
    try {
      matchJson(JSON.parse(shown.slice(6)), JSON.parse(actual.slice(6)), probe);
    } catch {
      return false;
    }
    if (probe.problems.length) return false;
    if (record) for (const [k, v] of probe.substitutions) match.substitutions.set(k, v);
    return true;
  }
  if (shown.endsWith('...')) return normalLine(actual).startsWith(normalLine(shown.slice(0, -3)));
  return normalLine(shown) === normalLine(actual);
}

/** Compares what a block printed with its output block. */
export function matchOutput(output: Block, printed: string): Match {
  const match: Match = { problems: [], substitutions: new Map() };
  if (output.lang === 'json') {
    let shown: unknown;
    try {
      shown = JSON.parse(output.code);
    } catch (err) {
      match.problems.push(`the guide's output block is not JSON: ${String(err)}`);
      return match;
    }
    const values = jsonValues(printed);
    if (!values) match.problems.push(`the run printed no JSON: ${printed.slice(0, 300)}`);
    else if (values.length === 1) matchJson(shown, values[0], match);
    else matchJson(shown, values, match);
    return match;
  }
  matchText(output.code, printed, match);
  return match;
}
