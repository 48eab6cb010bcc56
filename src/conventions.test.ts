// The conventions ARCHITECTURE.md states that no compiler or linter rule holds, checked on the text
// of the shipped sources: res.locals is typed where it is set (no reader casts), every
// operation of the spec is registered through operationRouter, never on a plain router, one
// clock (platform/clock.ts), one event-stream writer (platform/sse.ts), short files, and each
// table named in SQL only by the folder whose migrations make it.
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

/** Each table and the folder that owns it: the folder whose migrations/ creates it. */
function tableOwners(): Map<string, string> {
  const owners = new Map<string, string>();
  for (const folder of readdirSync('src', { withFileTypes: true })) {
    if (!folder.isDirectory()) continue;
    const dir = join('src', folder.name, 'migrations');
    let files: string[];
    try {
      files = readdirSync(dir).filter((f) => f.endsWith('.sql'));
    } catch {
      continue;
    }
    for (const file of files) {
      const sql = readFileSync(join(dir, file), 'utf8');
      for (const m of sql.matchAll(/\bcreate\s+(?:unlogged\s+)?table\s+(?:if\s+not\s+exists\s+)?(\w+)/gi))
        owners.set((m[1] as string).toLowerCase(), folder.name);
    }
  }
  return owners;
}

/**
 * The tables a source names in its SQL (after from, join, into, update, table) that another
 * folder owns, as `folder -> table (owner)`; comments are left out.
 */
function foreignTables(file: string, text: string, owners: Map<string, string>): string[] {
  const folder = file.split('/')[1] ?? '';
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/[^\n]*/g, '$1');
  const found = new Set<string>();
  for (const m of code.matchAll(/\b(?:from|join|into|update|table)\s+(\w+)/gi)) {
    const table = (m[1] as string).toLowerCase();
    const owner = owners.get(table);
    if (owner !== undefined && owner !== folder) found.add(`${folder} -> ${table} (${owner})`);
  }
  return [...found];
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

  describe('each table is named in SQL only by the folder that owns it', () => {
    const owners = tableOwners();

    it('knows the owner of every table the migrations make', () => {
      expect(owners.get('listings')).toBe('directory');
      expect(owners.get('campaigns')).toBe('sales');
      expect(owners.get('accounts')).toBe('accounts');
      expect(owners.get('usage_records')).toBe('platform');
    });

    it('finds no folder naming another folder’s table', () => {
      const found = sources('src').flatMap((file) => foreignTables(file, readFileSync(file, 'utf8'), owners));
      expect(found).toEqual([]);
    });

    it('refuses a planted cross-folder query, and not a folder’s own or a comment', () => {
      const planted =
        "const rows = await db.query('select id from target_list_members where target_list_id = $1', [id]);";
      expect(foreignTables('src/crm/planted.ts', planted, owners)).toEqual([
        'crm -> target_list_members (sales)',
      ]);
      expect(foreignTables('src/sales/planted.ts', planted, owners)).toEqual([]);
      expect(foreignTables('src/crm/planted.ts', '// read from listings, once', owners)).toEqual([]);
    });
  });
});
