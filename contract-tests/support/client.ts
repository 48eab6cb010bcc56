// A suite's plain client of the services, for the calls around what a test proves (setting up,
// polling): JSON in and out with a bearer key, and waiting for a condition. What a test proves
// goes through the generated SDK or the official clients instead.

export interface Sent {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/**
 * Sends `body` (if any) with the key (`null` for none) and any extra headers: an object as JSON, a
 * string as it is (for malformed JSON). The answer whatever its status; an empty body (a 204) as `{}`.
 */
export async function send(
  base: string,
  key: string | null,
  method: string,
  path: string,
  body?: object | string,
  headers: Record<string, string> = {},
): Promise<Sent> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(key === null ? {} : { Authorization: `Bearer ${key}` }),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    if (text !== '') parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${method} ${path}: ${res.status} answered with no JSON: ${text.slice(0, 200)}`);
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** A call that must succeed: its JSON body, or an error naming the request, the status and the body. */
export async function call(
  base: string,
  key: string | null,
  method: string,
  path: string,
  body?: object,
  headers?: Record<string, string>,
): Promise<Record<string, unknown>> {
  const res = await send(base, key, method, path, body, headers);
  if (res.status < 200 || res.status > 299)
    throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * Polls `check` every `everyMs` until it gives a value other than undefined or false, and returns it;
 * on a timeout fails naming `what` (a function is asked at that moment, e.g. for a child's output).
 */
export async function until<T>(
  what: string | (() => string),
  check: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 60_000,
  everyMs = 100,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()} (${ms} ms)`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
