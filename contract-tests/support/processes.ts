// Starts and stops child processes the suites depend on (Prism mocks), and waits for ports.
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

// Ports handed out below the kernel's ephemeral range (32768-60999 on Linux): a port taken from
// that range and closed again can be the local port of any outgoing connection (a database
// client's, a test's fetch) before the child that was given it binds it, and the child then
// exits with EADDRINUSE. Below it only listeners bind, and each candidate is bound once to check.
const PORT_LOW = 20_000;
const PORT_HIGH = 32_767;
const handedOut = new Set<number>();

const bindable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/** A port nothing listens on now, for a child (or a server) to bind on 127.0.0.1. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = PORT_LOW + Math.floor(Math.random() * (PORT_HIGH - PORT_LOW + 1));
    if (handedOut.has(port)) continue;
    if (await bindable(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port between ${PORT_LOW} and ${PORT_HIGH} in 50 tries`);
}

/** Waits until `url` answers at all; fails at once if `child` exits, with what it printed meanwhile. */
export async function waitForHttp(url: string, child?: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: string | undefined;
  child?.once('exit', (code, signal) => {
    exited = `with ${signal ?? code}`;
  });
  let output = '';
  const read = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-2000);
  };
  child?.stdout?.on('data', read);
  child?.stderr?.on('data', read);
  const printed = () => (output ? `; its output:\n${output}` : '');
  try {
    while (Date.now() < deadline) {
      if (exited)
        throw new Error(`the process serving ${url} exited ${exited} before it answered${printed()}`);
      try {
        await fetch(url, { signal: AbortSignal.timeout(1000) });
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    throw new Error(`${url} did not answer within ${timeoutMs} ms${printed()}`);
  } finally {
    child?.stdout?.off('data', read);
    child?.stderr?.off('data', read);
  }
}

export function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

/** Everything a child writes to stdout and stderr, as it comes. */
export function outputOf(child: ChildProcess): () => string {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return () => output;
}

/**
 * Waits until `pattern` matches what a child has printed (its pipe and its HTTP answers race in
 * our event loop) and returns the match; fails naming what it waited for and the last output.
 */
export async function printed(
  what: string,
  output: () => string,
  pattern: RegExp,
  ms = 10_000,
): Promise<RegExpExecArray> {
  const end = Date.now() + ms;
  for (;;) {
    const found = pattern.exec(output());
    if (found) return found;
    if (Date.now() > end)
      throw new Error(
        `${what}: not printed within ${ms} ms (${pattern}); last output:\n${output().slice(-2000)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
