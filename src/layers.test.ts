// The layers of ARCHITECTURE.md hold: ESLint (the project's own config) refuses a wrong-way import
// and lets a right-way one through, on the text of a file as if it were in that folder; and
// dependency-cruiser (the project's own rules) finds a planted upward import and a planted cycle.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise, type ICruiseResult, type IFlattenedRuleSet } from 'dependency-cruiser';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

async function importErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: file });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layers', () => {
  it.each([
    ['src/platform/db.ts', "import type { AccountStore } from '../accounts/store.ts';"],
    ['src/platform/jobs.ts', "import type { Config } from '../config.ts';"],
    ['src/accounts/store.ts', "import type { Hub } from '../mcp/tools.ts';"],
    ['src/webhooks/store.ts', "import { readyInCluster } from '../cluster.ts';"],
    ['src/directory/routes.ts', "import type { Platform } from '../context.ts';"],
    ['src/mcp/remote.ts', "import { createDirectoryService } from '../services/directory.ts';"],
    ['src/sales/routes.ts', "import { loadConfig } from '../config.ts';"],
    ['src/model/chat-routes.ts', "import type { Hub } from '../mcp/tools.ts';"],
    ['src/directory/store.ts', "import type { Sender } from '../sales/sender.ts';"],
    ['src/webhooks/store.ts', "import { openStorage } from '../storage.ts';"],
    // from a folder inside a folder: two `../` leave it
    ['src/directory/search/sql.ts', "import { openStorage } from '../../storage.ts';"],
    ['src/directory/search/sql.ts', "import { Hub } from '../../mcp/tools.ts';"],
    ['src/platform/db.ts', "import { x } from '../../contract-tests/support/server.ts';"],
    ['src/crm/syncs.ts', "import type { Hub } from '../mcp/tools.ts';"],
  ])('refuses in %s: %s', async (file, line) => {
    expect(await importErrors(file, `${line}\nexport {};\n`)).toHaveLength(1);
  });

  it.each([
    ['src/platform/db.ts', "import type { CreateKeyData } from '../../generated/model/client/types.gen.ts';"],
    ['src/webhooks/store.ts', "import { newId } from '../platform/ids.ts';"],
    ['src/services/directory.ts', "import { openStorage } from '../storage.ts';"],
    ['src/services/model.ts', "import { hubConnector } from '../mcp/connector.ts';"],
    ['src/agents/routes.ts', "import { isAbort } from '../model/engines/assemble.ts';"],
    ['src/directory/search/memory.ts', "import { TopK } from '../keywords/top-k.ts';"],
    ['src/directory/search/sql.ts', "import type { Db } from '../../platform/db.ts';"],
    [
      'src/directory/search/sql.ts',
      "import type { X } from '../../../generated/directory/client/types.gen.ts';",
    ],
    ['src/crm/syncs.ts', "import type { TargetLists } from '../sales/target-lists.ts';"],
  ])('allows in %s: %s', async (file, line) => {
    expect(await importErrors(file, `${line}\nexport {};\n`)).toEqual([]);
  });
});

describe('import graph', async () => {
  const config = '../.dependency-cruiser.js'; // plain JavaScript, without types
  const { default: rules } = (await import(config)) as { default: { forbidden: unknown[] } };

  async function violations(files: Record<string, string>): Promise<string[]> {
    const base = await mkdtemp(join(tmpdir(), 'layers-'));
    try {
      for (const [path, text] of Object.entries(files)) {
        await mkdir(dirname(join(base, path)), { recursive: true });
        await writeFile(join(base, path), text);
      }
      const { output } = await cruise(['src'], {
        baseDir: base,
        validate: true,
        ruleSet: { forbidden: rules.forbidden } as IFlattenedRuleSet,
        tsPreCompilationDeps: true,
        outputType: 'json',
      });
      const result = JSON.parse(output as string) as ICruiseResult;
      return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  }

  it('finds an import up the floors, into the composition root and around a cycle', async () => {
    expect(
      await violations({
        'src/platform/ids.ts': "import type { Key } from '../accounts/store.ts';\nexport type Id = Key;\n",
        'src/accounts/store.ts':
          "import { loadConfig } from '../config.ts';\nexport type Key = typeof loadConfig;\n",
        'src/config.ts': 'export function loadConfig(): void {}\n',
        'src/mcp/a.ts': "import { b } from './b.ts';\nexport const a = () => b;\n",
        'src/mcp/b.ts': "import { a } from './a.ts';\nexport const b = () => a;\n",
        'src/services/model.ts':
          "import '../config.ts';\nimport '../mcp/a.ts';\nimport '../platform/ids.ts';\n",
      }),
    ).toEqual([
      'no-circular: src/mcp/a.ts -> src/mcp/b.ts',
      'no-upward-from-accounts: src/accounts/store.ts -> src/config.ts',
      'no-upward-from-platform: src/platform/ids.ts -> src/accounts/store.ts',
    ]);
  });

  it('lets the floors import downward and the services import everything', async () => {
    expect(
      await violations({
        'src/platform/ids.ts': 'export const id = 1;\n',
        'src/accounts/store.ts': "import { id } from '../platform/ids.ts';\nexport const key = id;\n",
        'src/config.ts': 'export const config = 1;\n',
        'src/services/model.ts': "import '../config.ts';\nimport '../accounts/store.ts';\n",
      }),
    ).toEqual([]);
  });
});
