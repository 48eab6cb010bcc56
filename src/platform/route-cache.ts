// express-openapi-validator 5.6.2 finds a request's operation by compiling every route of the
// spec it scans with path-to-regexp, on every request (openapi.metadata.js, lookupRoute): at
// 37 operations that was a third of everything a cached search allocated, and CPU with it.
// Upstream has the fix open (cdimascio/express-openapi-validator#1217, "perf: cache route
// matchers"); until it ships, the compiled matchers are kept here. path-to-regexp is loaded
// once (one module instance, the one the validator requires), and the validator reads
// `pathToRegexp` from its exports at each call, so wrapping that export with a memo is enough.
// A result is a { regexp, keys } pair that no caller changes, and its RegExp has no `g` or `y`
// flag, so `exec` keeps no state between calls: sharing it changes nothing but the cost.
import { createRequire } from 'node:module';

type Compile = (path: unknown, options?: Record<string, unknown>) => { regexp: RegExp; keys: unknown[] };

const require = createRequire(import.meta.url);
/** The path-to-regexp module the validator itself loads. */
const pathToRegexpModule = createRequire(require.resolve('express-openapi-validator'))('path-to-regexp') as {
  pathToRegexp: Compile;
};

/** How many matchers were compiled (tests: none after a route's first request). */
export const routeMatchers = { compiled: 0 };

/** Routes come from the specs, so the memo stays small; past this it compiles as before. */
const LIMIT = 10_000;

let installed = false;

/** Wraps path-to-regexp's `pathToRegexp` with a memo, once per process. */
export function cacheRouteMatchers(): void {
  if (installed) return;
  installed = true;
  const compile = pathToRegexpModule.pathToRegexp;
  // by path, then by the flags { sensitive, strict } as bits: no key string made per call
  const plain = new Map<string, Array<ReturnType<Compile> | undefined>>();
  const other = new Map<string, ReturnType<Compile>>();
  let size = 0;
  pathToRegexpModule.pathToRegexp = (path, options = {}) => {
    if (typeof path !== 'string') {
      routeMatchers.compiled++;
      return compile(path, options);
    }
    // the validator asks with { sensitive, strict } for every route of the spec on every request
    let flags = 0;
    for (const k in options) {
      const v = options[k];
      if (typeof v !== 'boolean' || (k !== 'sensitive' && k !== 'strict')) {
        flags = -1;
        break;
      }
      if (v) flags |= k === 'sensitive' ? 1 : 2;
    }
    const key = flags < 0 ? `${path}\u0000${JSON.stringify(options)}` : undefined;
    const hit = key === undefined ? plain.get(path)?.[flags] : other.get(key);
    if (hit) return hit;
    const made = compile(path, options);
    routeMatchers.compiled++;
    if (size < LIMIT && !made.regexp.global && !made.regexp.sticky) {
      size++;
      if (key !== undefined) other.set(key, made);
      else {
        const slots = plain.get(path) ?? [];
        slots[flags] = made;
        plain.set(path, slots);
      }
    }
    return made;
  };
}
