// JSON nested deeper than any request of ours needs is refused before it is parsed: a body of
// 10,000 nested arrays used to overflow the stack of the code that walks parsed bodies (a 500).
// The scan reads the raw bytes once, counting brackets outside strings.

/** Deeper than any body of the specs (tool and response schemas included) and than serde_json's 128. */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** The deepest nesting of `bytes` (a JSON text), or the first depth over `limit`. */
export function jsonDepth(bytes: Uint8Array, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    }
  }
  return deepest;
}

/** The `type` body-parser keeps on the error `refuseDeepJson` throws; the error handler maps it. */
export const TOO_DEEP = 'entity.too.deep';

/**
 * The JSON body parser's `verify` hook, before parsing. It throws a plain error that body-parser
 * annotates (it sets `type` and `status`, which ApiError's getters would refuse).
 */
export function refuseDeepJson(_req: unknown, _res: unknown, bytes: Buffer): void {
  if (jsonDepth(bytes) > MAX_JSON_DEPTH) {
    throw Object.assign(new Error('too deep'), { status: 400, type: TOO_DEEP });
  }
}
