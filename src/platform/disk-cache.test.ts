import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CACHE_DIR, cachedOnDisk } from './disk-cache.ts';

describe('cachedOnDisk', () => {
  const dir = mkdtempSync(join(tmpdir(), 'disk-cache-'));
  const code = join(dir, 'code.ts');
  const data = join(dir, 'data.txt');
  const name = `test-${randomBytes(6).toString('hex')}`;
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    for (const file of readdirSync(CACHE_DIR)) if (file.startsWith(name)) rmSync(join(CACHE_DIR, file));
  });

  it('makes a value once per set of inputs and reads it back whole; another input makes it again', () => {
    writeFileSync(code, 'one');
    writeFileSync(data, 'rows');
    let made = 0;
    const make = () => {
      made += 1;
      return { made, names: new Map([['köln', [2886242]]]) };
    };
    const first = cachedOnDisk(name, { code: [code], data: [data] }, make);
    const again = cachedOnDisk(name, { code: [code], data: [data] }, make);
    expect(made).toBe(1);
    expect(again).toEqual(first);
    writeFileSync(code, 'two');
    expect(cachedOnDisk(name, { code: [code], data: [data] }, make).made).toBe(2);
    writeFileSync(data, 'more rows');
    expect(cachedOnDisk(name, { code: [code], data: [data] }, make).made).toBe(3);
  });
});
