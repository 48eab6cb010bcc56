// A Python virtual environment for suites that drive Python tools (the OpenAI Python SDK):
// created with `python3 -m venv` and filled from a pinned requirements file on first use, and
// again whenever that file changes (a stamp in the venv remembers its hash). Needs Python 3.10+
// and PyPI access, as the schemathesis runner does.
//
// Several test files, run side by side, ask for the same venv: one installs while the others
// wait (a lock folder beside the venv), so that a fresh clone runs one pip, not three into one
// site-packages. `npm test` starts it before the tests (scripts/test.ts), since pip on a fresh
// machine takes minutes that would otherwise count against one file's start-up.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';

/** A lock left behind by a killed run is taken over after this long. */
const STALE_LOCK_MS = 20 * 60_000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `fn` holding the lock folder `lock`, made by one process at a time. */
function withLock<T>(lock: string, fn: () => T): T {
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (since !== undefined && Date.now() - since > STALE_LOCK_MS)
        rmSync(lock, { recursive: true, force: true });
      else sleepSync(500);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Makes sure `venv` holds exactly what `requirements` pins; returns its python. */
export function ensureVenv(venv: string, requirements: string): string {
  const python = `${venv}/bin/python`;
  const stamp = `${venv}/.requirements-sha256`;
  const wanted = createHash('sha256').update(readFileSync(requirements)).digest('hex');
  const ready = () => existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted && existsSync(python);
  if (ready()) return python;
  return withLock(`${venv}.lock`, () => {
    if (ready()) return python; // made while this process waited
    const started = Date.now();
    console.log(`python: installing ${requirements} into ${venv}/ from PyPI`);
    if (!existsSync(python)) execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
    execFileSync(
      python,
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirements],
      { stdio: 'inherit' },
    );
    writeFileSync(stamp, wanted);
    console.log(`python: ${venv}/ ready in ${Math.round((Date.now() - started) / 1000)} s`);
    return python;
  });
}

// `node contract-tests/support/python.ts`: the test suites' venv made now (scripts/test.ts).
if (import.meta.main) ensureVenv('.venv-python', 'contract-tests/python/requirements.txt');
