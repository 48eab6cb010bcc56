// Requests built from an operation's spec examples, as a client that read the docs would send
// them, with the parts a test changes (key, path parameters, body, headers) overridable.
import { readFileSync } from 'node:fs';
import { type Api, exampleOf, type Operation, paramExample } from './spec.ts';

export interface ExampleOptions {
  /** The bearer secret; `null` sends no Authorization header. */
  key: string | null;
  /** Path parameters to use instead of their examples. */
  pathParams?: Record<string, string>;
  /** Query parameters to use instead of their examples. */
  query?: Record<string, string>;
  /** A JSON body to send instead of the example. */
  body?: unknown;
  headers?: Record<string, string>;
  method?: string;
}

/** The example JSON body of an operation, if it takes one. */
export function exampleBody(op: Operation): unknown {
  const media = op.requestBody?.content['application/json'];
  return media ? exampleOf(media) : undefined;
}

export function examplePath(
  op: Operation,
  options: Pick<ExampleOptions, 'pathParams' | 'query'> = {},
): string {
  let path = op.path;
  const query = new URLSearchParams();
  for (const param of op.parameters) {
    const value = paramExample(op.api, param);
    if (param.in === 'path') {
      const given = options.pathParams?.[param.name] ?? String(value);
      path = path.replace(`{${param.name}}`, encodeURIComponent(given));
    }
    if (param.in === 'query') {
      const given = options.query?.[param.name];
      if (given !== undefined) query.set(param.name, given);
      else if (param.required && value !== undefined) query.set(param.name, String(value));
    }
  }
  return query.size ? `${path}?${query}` : path;
}

/** Calls an operation with its spec examples (and the overrides given). */
export function fetchExample(base: string, op: Operation, options: ExampleOptions): Promise<Response> {
  const headers: Record<string, string> = {
    ...(options.key !== null ? { authorization: `Bearer ${options.key}` } : {}),
  };
  let body: BodyInit | undefined;
  const content = op.requestBody?.content ?? {};
  if (content['application/json']) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body ?? exampleOf(content['application/json']));
  } else if (content['multipart/form-data']) {
    const form = new FormData();
    for (const [name, value] of Object.entries(
      (exampleOf(content['multipart/form-data']) ?? {}) as Record<string, unknown>,
    )) {
      if (name !== 'file') form.set(name, typeof value === 'string' ? value : JSON.stringify(value));
    }
    form.set('file', new Blob([new Uint8Array(2048)], { type: 'audio/wav' }), 'probe.wav');
    body = form;
  }
  return fetch(`${base}${examplePath(op, options)}`, {
    method: options.method ?? op.method,
    headers: { ...headers, ...options.headers },
    ...(body ? { body } : {}),
  });
}

/**
 * The operations contract-tests/schemathesis/<api>.toml marks pending (still answering 501):
 * the ids of its `[[operations]]` tables with `enabled = false`.
 */
export function pendingOperations(api: Api): string[] {
  const toml = readFileSync(`contract-tests/schemathesis/${api}.toml`, 'utf8');
  return toml
    .split(/^\[\[operations\]\]$/m)
    .slice(1)
    .filter((table) => /^enabled\s*=\s*false\s*$/m.test(table.split(/^\[/m)[0] ?? ''))
    .flatMap((table) => {
      const ids = /include-operation-id\s*=\s*(\[[^\]]*\]|"[^"]*")/.exec(table)?.[1] ?? '';
      return [...ids.replace(/#.*$/gm, '').matchAll(/"([^"]+)"/g)].map((m) => m[1] as string);
    });
}
