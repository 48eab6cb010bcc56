// The layers of ARCHITECTURE.md hold: ESLint (the project's own config) refuses a wrong-way import
// and lets a right-way one through, on the text of a file as if it were in that folder.
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
    ['src/mcp/remote.ts', "import { createDirectoryService } from '../directory/app.ts';"],
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
    ['src/directory/app.ts', "import type { Platform } from '../context.ts';"],
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
