// One linter for the whole repo: ESLint with typescript-eslint's type-aware recommended rules.
import js from '@eslint/js';
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';
import { MAY_IMPORT } from './layers.js';

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
      // the lock folders that contract-tests/support/python.ts makes and removes beside each venv
      // while lint runs in parallel: a walk that lists one just as it goes crashes with ENOENT
      '.venv.lock/',
      '.venv-python.lock/',
      '.venv-bench.lock/',
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
  {
    // Regular expressions over people's and providers' text (search, concierge briefs and replies,
    // mail): none may backtrack super-linearly (issue 38), found by eslint-plugin-regexp's analysis
    // (scslre), not a hand list. `no-super-linear-move` (a pattern tried from each position of a
    // long text) is checked in src/ only: tests and scripts read text they wrote.
    files: ['src/**/*.ts'],
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-backtracking': 'error',
      'regexp/no-super-linear-move': ['error', { ignoreSticky: true, ignorePartial: false }],
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  ...layers(),
);

/**
 * The layers of src/ (ARCHITECTURE.md, layers.js), as import rules: each folder may import the
 * folders named for it in MAY_IMPORT, generated/ and npm packages; the composition root (the
 * src/*.ts files) is imported only by src/services/. dependency-cruiser checks the floors and
 * cycles beside it (.dependency-cruiser.js).
 */
function layers() {
  return Object.entries(MAY_IMPORT)
    .filter(([, allowed]) => Array.isArray(allowed))
    .flatMap(([folder, allowed]) => {
      // From src/<folder>/x.ts, `depth` 1 (or a file d - 1 folders deeper, `depth` d): exactly d
      // `../` leave the folder for src/<other>/... or the composition root src/<root>.ts; more
      // leave src, where only generated/ may be imported.
      const rule = (depth) => {
        const ok = [...allowed, folder].map((f) => `${f}/`).join('|');
        const message = `src/${folder} may import only ${allowed.length ? allowed.join(', ') : 'nothing else in src'} (ARCHITECTURE.md)`;
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
              {
                regex: `${up}[a-z-]+\\.ts$`,
                message: `${message}; the composition root (src/*.ts) is imported by src/services/ alone`,
              },
            ],
          },
        ];
      };
      return [1, 2, 3, 4].map((depth) => ({
        files: [`src/${folder}/${'*/'.repeat(depth - 1)}*.ts`],
        ignores: ['**/*.test.ts', 'src/**/testing/**'],
        rules: { 'no-restricted-imports': rule(depth) },
      }));
    });
}
