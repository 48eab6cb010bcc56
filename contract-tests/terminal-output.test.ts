// Regression: on a terminal `npm start` printed raw pino JSON, and the demo load's "progress bar"
// was a JSON line per 1,000 rows. A real terminal (util-linux `script` gives the process a
// pseudo-TTY) now gets human lines and a bar; a pipe, or LOG_FORMAT=json, gets JSON lines.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { freePort, outputOf, printed, stop } from './support/processes.ts';

/** Runs both services until the directory says it is listening, and returns what they printed. */
async function startUp(env: Record<string, string>, terminal: boolean): Promise<string> {
  const [model, directory] = [await freePort(), await freePort()];
  const vars = {
    DATA_DIR: 'memory://',
    MODEL_API_PORT: String(model),
    DIRECTORY_API_PORT: String(directory),
    INBOUND_SMTP_PORT: '0',
    HOST: '127.0.0.1',
    DEMO_LISTINGS: '2000',
    BOOTSTRAP_ADMIN_KEY: 'sk_test_terminal_output_0123456789abcdef',
    NO_COLOR: '1',
    ...env,
  };
  const command = `${process.execPath} src/main.ts`;
  const child = terminal
    ? spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env: { ...process.env, ...vars } })
    : spawn(process.execPath, ['src/main.ts'], { env: { ...process.env, ...vars } });
  const output = outputOf(child);
  try {
    await printed('the directory listening', output, /directory API listening/, 90_000);
  } finally {
    await stop(child);
  }
  return output();
}

describe('what start-up prints', () => {
  it('talks to a person on a terminal: human log lines and a real progress bar', async () => {
    const output = await startUp({}, true);
    expect(output).toMatch(/INFO.*model-api: model API listening/);
    expect(output).not.toMatch(/^\{"level"/m);
    expect(output).toMatch(/loading the demo directory \[[^\]]+\] 100% \| 2000\/2000/);
  }, 120_000); // startUp's own limit is 90 s

  it('prints JSON lines through a pipe, the load at each tenth', async () => {
    const output = await startUp({}, false);
    const lines = output.split('\n').filter(Boolean);
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    const progress = lines.filter((line) => line.includes('loading the demo directory'));
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.length).toBeLessThanOrEqual(11);
  }, 120_000);

  it('prints JSON lines on a terminal too when LOG_FORMAT=json', async () => {
    const output = await startUp({ LOG_FORMAT: 'json' }, true);
    expect(output).toMatch(/^\{"level":30,.*"msg":"model API listening/m);
    expect(output).not.toMatch(/loading the demo directory \[/);
  }, 120_000);
});
