// The conventions ARCHITECTURE.md states that no compiler or linter rule holds, checked on the text
// of the shipped sources: res.locals is typed where it is set (no reader casts), every
// operation of the spec is registered through operationRouter, never on a plain router, one
// clock (platform/clock.ts), one event-stream writer (platform/sse.ts), and short files.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

function offending(pattern: RegExp): string[] {
  return sources('src').flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe('conventions', () => {
  it('res.locals is read without casts (Express.Locals is augmented where each is set)', () => {
    expect(offending(/\blocals\.\w+\s+as\b/)).toEqual([]);
  });

  it('no /v1/ operation is registered on a plain Express router', () => {
    expect(offending(/\b(router|app)\.(get|post|put|patch|delete)\(\s*['"`]\/v1\//)).toEqual([]);
  });

  it('the seconds clock is defined once, in platform/clock.ts', () => {
    expect(offending(/\bnowSeconds\s*=/).filter((l) => !l.startsWith('src/platform/clock.ts:'))).toEqual([]);
  });

  it('only platform/sse.ts writes event-stream headers', () => {
    expect(
      offending(/Content-Type', 'text\/event-stream/).filter((l) => !l.startsWith('src/platform/sse.ts:')),
    ).toEqual([]);
  });

  it('no src file is over 700 lines, but data tables under a data/ folder', () => {
    const long = sources('src').filter(
      (file) => !file.split('/').includes('data') && readFileSync(file, 'utf8').split('\n').length > 700,
    );
    expect(long).toEqual([]);
  });
});
