// One linter for the whole repo: ESLint with typescript-eslint's type-aware recommended rules.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'generated/',
      'docs/reference/',
      'dist/',
      'data/',
      'node_modules/',
      '.venv/',
      '.venv-python/',
      '.venv-bench/',
      'test-results/',
      '.schemathesis/',
      '.tmp/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // `declare global { namespace Express { interface Locals ... } } }`: typed res.locals
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  ...layers(),
);

/**
 * The layers of src/ (ARCHITECTURE.md), as import rules: each folder may import the folders named
 * for it here, generated/ and npm packages; the composition root (context, server, main, cluster,
 * config, ports) is imported only by the services' assemblies (app.ts) and command-line entries.
 */
function layers() {
  const SHARED = ['accounts', 'limits', 'usage', 'mail', 'embeddings', 'status'];
  const MAY_IMPORT = {
    platform: [],
    accounts: ['platform'],
    limits: ['platform'],
    usage: ['platform'],
    mail: ['platform'],
    embeddings: ['platform'],
    status: ['platform'],
    webhooks: ['platform'],
    media: ['platform'],
    console: ['platform', 'accounts', 'limits', 'mail'],
    mcp: ['platform', 'agents'],
    agents: ['platform', 'limits', 'usage', 'model'],
    model: ['platform', ...SHARED, 'media', 'agents', 'mcp', 'console'],
    directory: ['platform', ...SHARED, 'console', 'webhooks'],
    sales: ['platform', ...SHARED, 'directory', 'webhooks', 'console'],
    concierge: ['platform', ...SHARED, 'directory', 'webhooks', 'console', 'sales'],
    crm: ['platform', ...SHARED, 'sales', 'webhooks'],
    // above every feature: composes their account-data parts (export, erasure, retention)
    privacy: [
      'platform',
      ...SHARED,
      'webhooks',
      'media',
      'console',
      'mcp',
      'agents',
      'sales',
      'concierge',
      'crm',
    ],
  };
  const ENTRIES = ['src/*/app.ts', 'src/directory/import.ts', 'src/directory/generate.ts'];
  // A service's assembly (its app.ts) also mounts features that build on the service's own
  // folder: the directory's Sales routes live in src/sales, which imports src/directory.
  const ASSEMBLES = { directory: ['sales', 'concierge', 'crm'] };
  return Object.entries(MAY_IMPORT).flatMap(([folder, allowed]) => {
    // From src/<folder>/x.ts, `depth` 1 (or a file d - 1 folders deeper, `depth` d): exactly d
    // `../` leave the folder for src/<other>/... or the composition root src/<root>.ts; more
    // leave src, where only generated/ may be imported.
    const rule = (roots, depth) => {
      const may = [...allowed, ...(roots ? (ASSEMBLES[folder] ?? []) : [])];
      const ok = [...may, folder].map((f) => `${f}/`).join('|');
      const message = `src/${folder}${roots ? ' (its app.ts)' : ''} may import only ${may.length ? may.join(', ') : 'nothing else in src'} (ARCHITECTURE.md)`;
      const up = `^(\\.\\./){${depth}}`;
      return [
        'error',
        {
          patterns: [
            { regex: `${up}(?!${ok})[a-z-]+/`, message },
            {
              regex: `^(\\.\\./){${depth + 1},}(?!generated/)[a-z-]+/`,
              message: `${message}; outside src/ only generated/`,
            },
            ...(roots
              ? []
              : [
                  {
                    regex: `${up}(context|storage|server|main|cluster|config|ports)\\.ts$`,
                    message: `${message}; the composition root is imported by the services' app.ts alone`,
                  },
                ]),
          ],
        },
      ];
    };
    return [
      ...[1, 2, 3, 4].map((depth) => ({
        files: [`src/${folder}/${'*/'.repeat(depth - 1)}*.ts`],
        ignores: ['**/*.test.ts', 'src/**/testing/**', ...ENTRIES],
        rules: { 'no-restricted-imports': rule(false, depth) },
      })),
      {
        files: [`src/${folder}/app.ts`, ...ENTRIES.filter((e) => e.startsWith(`src/${folder}/`))],
        ignores: ['**/*.test.ts'],
        rules: { 'no-restricted-imports': rule(true, 1) },
      },
    ];
  });
}
