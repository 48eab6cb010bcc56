// Serves Prism mocks of the bundled specs: the model API on MOCK_MODEL_PORT (4010) and the
// directory API on MOCK_DIRECTORY_PORT (4011). `npm run mock [model|directory]`.
// Prism answers every operation with the spec's examples; ask for a status with
// `Prefer: code=429` or an example with `Prefer: example=NAME`, and for the chat stream with
// `Accept: text/event-stream`.
import { type ChildProcess, spawn } from 'node:child_process';

export const MOCK_PORTS = {
  model: Number(process.env.MOCK_MODEL_PORT ?? 4010),
  directory: Number(process.env.MOCK_DIRECTORY_PORT ?? 4011),
} as const;

export type MockName = keyof typeof MOCK_PORTS;

export function startMock(
  name: MockName,
  port: number = MOCK_PORTS[name],
  { host = '127.0.0.1', quiet = false } = {},
): ChildProcess {
  return spawn(
    'prism',
    ['mock', '--host', host, '--port', String(port), '--dynamic', 'false', `generated/${name}/openapi.json`],
    { stdio: ['ignore', quiet ? 'ignore' : 'inherit', 'inherit'], env: process.env },
  );
}

if (import.meta.main) {
  const arg = process.argv[2];
  if (arg !== undefined && arg !== 'model' && arg !== 'directory') {
    console.error('usage: npm run mock [-- model|directory]');
    process.exit(2);
  }
  const names: MockName[] = arg ? [arg] : ['model', 'directory'];
  const children = names.map((name) => startMock(name));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      for (const child of children) child.kill('SIGTERM');
      process.exit(0);
    });
  }
  for (const child of children) child.on('exit', (code) => process.exit(code ?? 1));
}
