// A Python virtual environment for suites that drive Python tools (the OpenAI Python SDK):
// created with `python3 -m venv` and filled from a pinned requirements file on first use, and
// again whenever that file changes (a stamp in the venv remembers its hash). Needs Python 3.10+
// and PyPI access, as the schemathesis runner does.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** Makes sure `venv` holds exactly what `requirements` pins; returns its python. */
export function ensureVenv(venv: string, requirements: string): string {
  const python = `${venv}/bin/python`;
  const stamp = `${venv}/.requirements-sha256`;
  const wanted = createHash('sha256').update(readFileSync(requirements)).digest('hex');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted && existsSync(python)) return python;
  console.log(`python: installing ${requirements} into ${venv}/ from PyPI`);
  if (!existsSync(python)) execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
  execFileSync(
    python,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirements],
    { stdio: 'inherit' },
  );
  writeFileSync(stamp, wanted);
  return python;
}
