// A call bounded in time as well as by its caller's signal.

/**
 * Runs `fn` with a signal that aborts at `ms` or with `signal`; the timeout is thrown as an Error
 * saying so, the caller's abort as whatever `fn` threw.
 */
export async function withTimeout<T>(
  ms: number,
  signal: AbortSignal,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const timeout = AbortSignal.timeout(ms);
  try {
    return await fn(AbortSignal.any([signal, timeout]));
  } catch (err) {
    if (timeout.aborted && !signal.aborted) throw new Error(`no answer within ${ms} ms`);
    throw err;
  }
}
