// One configuration: the README's table lists exactly the variables the configuration knows,
// every variable the code reads is one of them, and a bad value stops the real entry point
// with exit code 2 and a message naming the variable.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from './config.ts';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && entry.name !== 'test-db.ts'
      ? [path]
      : [];
  });
}

describe('configuration', () => {
  it("the README's table lists exactly the variables the configuration knows", () => {
    const readme = readFileSync('README.md', 'utf8');
    const table = readme.slice(readme.indexOf('| variable '));
    const rows = table.slice(0, table.indexOf('\n\n'));
    const listed = [...rows.matchAll(/^\| `([A-Z][A-Z0-9_]+)`/gm)].map((m) => m[1]);
    expect([...listed].sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  it('every variable read in src/ is one the configuration knows', () => {
    const read = new Set<string>();
    for (const file of sources('src')) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) read.add(m[1]!);
      for (const m of text.matchAll(
        /\b(?:integer|flag|port|publicUrl|durationMs|wholeNumber)\(\s*(?:env,\s*)?'([A-Z][A-Z0-9_]+)'/g,
      ))
        read.add(m[1]!);
    }
    const unknown = [...read].filter((name) => !(CONFIG_VARIABLES as readonly string[]).includes(name));
    expect(unknown).toEqual([]);
    expect(read.size).toBeGreaterThan(20);
  });

  it.each([
    ['JOB_WORKERS', 'lots', /JOB_WORKERS must be an integer from 0 to 256/],
    ['WEBHOOK_RETRY_SCHEDULE', '0s,5 minutes', /WEBHOOK_RETRY_SCHEDULE takes durations/],
    ['DATABASE_POOL_SIZE', '0', /DATABASE_POOL_SIZE must be an integer from 1 to 1000/],
    ['OUTBOUND_ALLOW_PRIVATE', 'yes', /OUTBOUND_ALLOW_PRIVATE must be true or false/],
  ])('%s=%s stops `node src/main.ts` with exit code 2, naming it', (name, value, message) => {
    const run = spawnSync(process.execPath, ['src/main.ts'], {
      env: { ...process.env, [name]: value, DATA_DIR: 'memory://' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/\bat .*\.ts:\d+/); // no stack trace
  });
});
