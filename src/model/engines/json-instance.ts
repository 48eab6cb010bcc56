// A small JSON Schema instance generator: builds a value that satisfies a schema (type, properties,
// required, additionalProperties, enum, const, items/prefixItems, minItems/maxItems, uniqueItems,
// minimum/maximum (exclusive too), multipleOf, minLength/maxLength, the formats date, date-time,
// time, email, uri, uuid, anyOf/oneOf (first branch), allOf (merged), $ref within the schema),
// filling strings with words of the prompt. `pattern` is honoured only when a candidate happens to match.
import type { Random } from './random.ts';
import { stem } from './words.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;

export interface InstanceContext {
  random: Random;
  /** Content words of the prompt. */
  terms: readonly string[];
  /** Proper names of the prompt (`Lisbon`, `Padaria Ribeiro`). */
  names: readonly string[];
  /** Numbers of the prompt. */
  numbers: readonly number[];
  /** A short phrase of the prompt, for free-text fields. */
  phrase: string;
  /** The prompt's raw tokens (`1100-053`), tried against a `pattern`. */
  tokens?: readonly string[];
  /**
   * Stems of the prompt's words. When given, arguments are taken from the prompt: an optional
   * property is filled only when the prompt speaks to it (its name's words, a place for a
   * location, a number for a count, one of its enum values), a boolean is true when the
   * prompt says its name ("open now" for `open_now`), and an enum takes the value the prompt
   * names. Tool calls use it; structured output fills every property.
   */
  promptStems?: ReadonlySet<string>;
}

const GENERIC_KEY_PARTS = new Set(['id', 'type', 'max', 'min', 'is', 'has', 'include', 'with', 'the', 'of']);

/** `open_now` -> ["open", "now"]; `maxResults` -> ["max", "results"]. */
function keyParts(key: string): string[] {
  return key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((p) => p.length > 1);
}

/** No candidate satisfies the schema (an optional property is then left out). */
const NONE = Symbol('none');

const MAX_DEPTH = 10;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function resolvePointer(root: Schema, ref: string): Schema | boolean | undefined {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isSchema(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return isSchema(node) || typeof node === 'boolean' ? node : undefined;
}

function slug(text: string): string {
  return (
    text
      .normalize('NFKD')
      .replace(/[^\p{L}\p{N}]+/gu, '.')
      .replace(/[^a-zA-Z0-9.]/g, '')
      .replace(/^\.+|(?<!\.)\.+$/g, '')
      .toLowerCase() || 'info'
  );
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

export class InstanceGenerator {
  readonly #root: Schema;
  readonly #ctx: InstanceContext;

  constructor(root: Schema, ctx: InstanceContext) {
    this.#root = root;
    this.#ctx = ctx;
  }

  generate(): Json {
    const value = this.#value(this.#root, '', 0, 0);
    return value === NONE ? '' : value;
  }

  #value(schemaIn: Schema | boolean, key: string, depth: number, salt: number): Json | typeof NONE {
    if (schemaIn === true || schemaIn === false) return this.#string({}, key, salt);
    let schema = schemaIn;
    // $ref (siblings apply too, as in 2020-12): merge the target under the siblings
    for (let hops = 0; typeof schema.$ref === 'string' && hops < 32; hops++) {
      const target = resolvePointer(this.#root, schema.$ref);
      const rest: Schema = { ...schema };
      delete rest.$ref;
      schema = { ...(isSchema(target) ? target : {}), ...rest };
    }
    if ('const' in schema) return schema.const as Json;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) {
      const named = this.#namedEnumValue(schema.enum);
      if (named !== undefined) return named;
      return schema.enum[salt % schema.enum.length] as Json;
    }
    const branches = Array.isArray(schema.oneOf)
      ? schema.oneOf
      : Array.isArray(schema.anyOf)
        ? schema.anyOf
        : null;
    if (branches !== null && branches.length > 0) {
      const rest: Schema = { ...schema };
      delete rest.oneOf;
      delete rest.anyOf;
      const first = branches[0] as Schema | boolean;
      return this.#value(isSchema(first) ? { ...rest, ...first } : first, key, depth, salt);
    }
    if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
      const { allOf, ...rest } = schema;
      return this.#value(mergeAll([rest, ...allOf.filter(isSchema)]), key, depth, salt);
    }
    const type = this.#type(schema);
    if (depth > MAX_DEPTH) return this.#minimal(schema, type, key, salt);
    switch (type) {
      case 'null':
        return null;
      case 'boolean':
        if (this.#ctx.promptStems !== undefined) return this.#keyNamed(key);
        return this.#ctx.random.next() < 0.5;
      case 'integer':
      case 'number':
        return this.#number(schema, type, key, salt);
      case 'array':
        return this.#array(schema, key, depth, salt);
      case 'object':
        return this.#object(schema, depth, salt);
      default:
        return this.#string(schema, key, salt);
    }
  }

  #type(schema: Schema): string {
    const declared = schema.type;
    if (typeof declared === 'string') return declared;
    if (Array.isArray(declared)) {
      const types = declared.filter((t): t is string => typeof t === 'string');
      return types.find((t) => t !== 'null') ?? types[0] ?? 'null';
    }
    if (isSchema(schema.properties) || 'additionalProperties' in schema || 'required' in schema)
      return 'object';
    if ('items' in schema || 'prefixItems' in schema) return 'array';
    if ('minimum' in schema || 'maximum' in schema || 'multipleOf' in schema) return 'number';
    return 'string';
  }

  /** The prompt says the key's words ("open now" for `open_now`). */
  #keyNamed(key: string): boolean {
    const stems = this.#ctx.promptStems;
    if (stems === undefined) return false;
    const parts = keyParts(key).filter((p) => !GENERIC_KEY_PARTS.has(p));
    return parts.length > 0 && parts.some((p) => stems.has(stem(p)));
  }

  #namedEnumValue(values: unknown[]): Json | undefined {
    const stems = this.#ctx.promptStems;
    if (stems === undefined) return undefined;
    return values.find(
      (v) => typeof v === 'string' && keyParts(v).length > 0 && keyParts(v).every((p) => stems.has(stem(p))),
    ) as Json | undefined;
  }

  /** Whether the prompt speaks to an optional property (see `promptStems`). */
  #promptSupports(key: string, schemaIn: Schema | boolean): boolean {
    if (this.#keyNamed(key)) return true;
    const schema = isSchema(schemaIn) ? schemaIn : {};
    if (Array.isArray(schema.enum)) return this.#namedEnumValue(schema.enum) !== undefined;
    const type = this.#type(schema);
    const k = key.toLowerCase();
    if (type === 'string' && PLACE_KEY.test(k)) return this.#ctx.names.length > 0;
    if (type === 'string' && QUERY_KEY.test(k)) return this.#ctx.phrase !== '';
    if ((type === 'integer' || type === 'number') && COUNT_KEY.test(k)) return this.#ctx.numbers.length > 0;
    return false;
  }

  #minimal(schema: Schema, type: string, key: string, salt: number): Json | typeof NONE {
    if (type === 'object') return {};
    if (type === 'array') return [];
    if (type === 'integer' || type === 'number') return this.#number(schema, type, key, salt);
    if (type === 'boolean') return false;
    if (type === 'null') return null;
    return this.#string(schema, key, salt);
  }

  #number(schema: Schema, type: string, key: string, salt: number): number {
    const integer = type === 'integer';
    const step =
      typeof schema.multipleOf === 'number' && schema.multipleOf > 0 ? schema.multipleOf : integer ? 1 : 0;
    let min = typeof schema.minimum === 'number' ? schema.minimum : -Infinity;
    let max = typeof schema.maximum === 'number' ? schema.maximum : Infinity;
    const exMin = schema.exclusiveMinimum;
    const exMax = schema.exclusiveMaximum;
    const epsilon = step > 0 ? step : 0.01;
    if (typeof exMin === 'number') min = Math.max(min, exMin + (integer ? 1 : epsilon));
    if (typeof exMax === 'number') max = Math.min(max, exMax - (integer ? 1 : epsilon));
    const fits = (n: number): boolean => n >= min && n <= max && (!integer || Number.isInteger(n));
    const snap = (n: number): number => {
      if (step <= 0) return Math.round(n * 100) / 100;
      let v = Math.round(n / step) * step;
      if (v < min) v += step;
      if (v > max) v -= step;
      return Number(v.toFixed(10));
    };
    // numbers of the prompt first ("for 3 people" fills `people: 3`)
    const prompt = this.#ctx.numbers.filter((n) => fits(n) && (step <= 0 || snap(n) === n));
    if (prompt.length > 0) return prompt[salt % prompt.length] as number;
    let low = Number.isFinite(min) ? min : Number.isFinite(max) ? max - 100 : 0;
    let high = Number.isFinite(max) ? max : low + 100;
    if (/year/i.test(key)) [low, high] = [Math.max(low, 2020), Math.min(high, 2030)];
    else if (/count|number|quantity|amount|limit|^n$|size|total|people|guests/i.test(key)) {
      [low, high] = [Math.max(low, 1), Math.min(high, Math.max(low, 1) + 9)];
    }
    if (low > high) [low, high] = [Number.isFinite(min) ? min : high, Number.isFinite(max) ? max : low];
    const raw = integer
      ? this.#ctx.random.int(Math.ceil(low), Math.floor(high))
      : low + this.#ctx.random.next() * (high - low);
    const value = snap(raw);
    return fits(value) ? value : snap(Number.isFinite(min) ? min : max);
  }

  #array(schema: Schema, key: string, depth: number, salt: number): Json[] {
    const minItems = typeof schema.minItems === 'number' ? schema.minItems : 0;
    const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity;
    const prefix = Array.isArray(schema.prefixItems) ? (schema.prefixItems as (Schema | boolean)[]) : [];
    const items = isSchema(schema.items) || typeof schema.items === 'boolean' ? schema.items : {};
    const target = Math.min(maxItems, Math.max(minItems, prefix.length, Math.min(2 + (salt % 2), maxItems)));
    const out: Json[] = [];
    const seen = new Set<string>();
    for (let i = 0; out.length < target && i < target * 4 + 4; i++) {
      const itemSchema = out.length < prefix.length ? (prefix[out.length] ?? {}) : items;
      if (itemSchema === false) break;
      const value = this.#value(itemSchema, key.replace(/s$/, ''), depth + 1, salt + i + out.length);
      if (value === NONE) break;
      if (schema.uniqueItems === true) {
        const id = JSON.stringify(value);
        if (seen.has(id)) continue;
        seen.add(id);
      }
      out.push(value);
    }
    return out;
  }

  #object(schema: Schema, depth: number, salt: number): { [key: string]: Json } {
    const properties = isSchema(schema.properties) ? schema.properties : {};
    const required = new Set(
      Array.isArray(schema.required) ? schema.required.filter((k) => typeof k === 'string') : [],
    );
    const maxProperties = typeof schema.maxProperties === 'number' ? schema.maxProperties : Infinity;
    const minProperties = typeof schema.minProperties === 'number' ? schema.minProperties : 0;
    const out: { [key: string]: Json } = {};
    const keys = [...required, ...Object.keys(properties).filter((k) => !required.has(k))];
    let index = 0;
    for (const key of keys) {
      if (Object.keys(out).length >= maxProperties && !required.has(key)) break;
      const sub = properties[key];
      if (
        this.#ctx.promptStems !== undefined &&
        !required.has(key) &&
        !this.#promptSupports(key, isSchema(sub) || typeof sub === 'boolean' ? sub : {})
      ) {
        continue;
      }
      const value = this.#value(
        isSchema(sub) || typeof sub === 'boolean' ? sub : {},
        key,
        depth + 1,
        salt + index++,
      );
      if (value !== NONE) out[key] = value;
      else if (required.has(key)) out[key] = '';
    }
    const additional = schema.additionalProperties;
    if (additional !== false) {
      const extra = isSchema(additional) ? additional : { type: 'string' };
      for (let i = 1; Object.keys(out).length < minProperties; i++) {
        const key = this.#ctx.terms[i - 1]?.toLowerCase().replace(/[^a-z0-9_]/g, '_') ?? `field_${i}`;
        if (key in out || key in properties) continue;
        const value = this.#value(extra, key, depth + 1, salt + i);
        out[key] = value === NONE ? '' : value;
      }
    }
    return out;
  }

  #string(schema: Schema, key: string, salt: number): string | typeof NONE {
    const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
    const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
    const candidates = this.#stringCandidates(schema, key, salt);
    const fitted = candidates.map((c) => this.#fitLength(c, minLength, maxLength));
    if (typeof schema.pattern !== 'string') return fitted[0] ?? '';
    const pattern = safeRegExp(schema.pattern);
    if (pattern === undefined) return fitted[0] ?? '';
    const fits = (c: string): boolean =>
      pattern.test(c) && Array.from(c).length >= minLength && Array.from(c).length <= maxLength;
    // words of the prompt first (a postcode the user wrote), then a string built from the pattern
    const found =
      [...fitted, ...(this.#ctx.tokens ?? [])].find(fits) ?? sampleFromPattern(schema.pattern, salt);
    return found !== undefined && fits(found) ? found : NONE;
  }

  #fitLength(text: string, minLength: number, maxLength: number): string {
    let chars = Array.from(text);
    const filler = this.#ctx.terms.length > 0 ? this.#ctx.terms : ['detail'];
    for (let i = 0; chars.length < minLength; i++)
      chars = chars.concat(Array.from(` ${filler[i % filler.length]}`));
    if (chars.length > maxLength) chars = chars.slice(0, maxLength);
    let out = chars.join('');
    if (out.length > 0 && out.trimEnd().length >= minLength) out = out.trimEnd();
    return out;
  }

  #stringCandidates(schema: Schema, key: string, salt: number): string[] {
    const { terms, names, phrase, random } = this.#ctx;
    const term = terms.length > 0 ? (terms[salt % terms.length] as string) : 'item';
    const date = new Date(
      Date.UTC(2026, random.int(0, 11), random.int(1, 28), random.int(8, 18), random.int(0, 59)),
    );
    const day = `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
    const time = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:00`;
    switch (schema.format) {
      case 'date':
        return [day];
      case 'date-time':
        return [`${day}T${time}Z`];
      case 'time':
        return [`${time}Z`];
      case 'email':
      case 'idn-email':
        return [`${slug(names[0] ?? term)}@example.eu`];
      case 'uri':
      case 'url':
      case 'iri':
        return [`https://example.eu/${slug(names[0] ?? term).replace(/\./g, '-')}`];
      case 'hostname':
        return [`${slug(term).replace(/\./g, '-')}.example.eu`];
      case 'uuid': {
        const hex = Array.from({ length: 32 }, () => random.int(0, 15).toString(16)).join('');
        return [
          `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`,
        ];
      }
      case 'ipv4':
        return [`192.0.2.${random.int(1, 254)}`];
      default:
        break;
    }
    const k = key.toLowerCase();
    const single = names.filter((n) => !n.includes(' '));
    const multi = names.filter((n) => n.includes(' '));
    const out: string[] = [];
    if (/near|around|address|where|location/.test(k) && names.length > 1) {
      out.push(names.join(', '), ...single.slice().reverse(), ...names);
    } else if (LOCATION_KEY.test(k)) {
      out.push(...single.slice().reverse(), ...names);
    } else if (/name|company|organi[sz]ation|person|brand|business|title|vendor|customer/.test(k)) {
      out.push(...multi, ...names);
    } else if (/email/.test(k)) {
      out.push(`${slug(names[0] ?? term)}@example.eu`);
    } else if (/url|uri|link|website|homepage/.test(k)) {
      out.push(`https://example.eu/${slug(names[0] ?? term).replace(/\./g, '-')}`);
    } else if (/date|day/.test(k)) {
      out.push(day);
    } else if (/lang|locale/.test(k)) {
      out.push('en');
    } else if (/currency/.test(k)) {
      out.push('EUR');
    } else if (/(^|_)id$|identifier|code|sku/.test(k)) {
      out.push(`${slug(term).replace(/\./g, '_')}_${salt + 1}`);
    } else if (QUERY_KEY.test(k)) {
      out.push(phrase);
    }
    out.push(names[salt % Math.max(names.length, 1)] ?? term, term, phrase, `${term} ${salt + 1}`);
    return out.filter((c) => c !== '');
  }
}

const LOCATION_KEY =
  /city|town|location|place|country|region|destination|origin|address|area|near|around|where/;
/** Keys an optional place name of the prompt fills (not `country` or `region`, which want codes). */
const PLACE_KEY = /city|town|location|place|address|area|near|around|where|destination|origin/;
const QUERY_KEY =
  /query|search|question|text|message|prompt|content|description|summary|topic|reason|note|answer|comment|keyword|^q$/;
const COUNT_KEY = /count|number|quantity|amount|limit|^n$|size|total|people|guests|results|max/;

function mergeAll(schemas: Schema[]): Schema {
  const merged: Schema = {};
  const properties: Schema = {};
  const required = new Set<string>();
  for (const schema of schemas) {
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'properties' && isSchema(value)) Object.assign(properties, value);
      else if (key === 'required' && Array.isArray(value)) for (const r of value) required.add(String(r));
      else if (!(key in merged)) merged[key] = value;
    }
  }
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.size > 0) merged.required = [...required];
  return merged;
}

/**
 * A string matching a simple regular expression: literals, escapes (\d \w \s and escaped
 * characters), classes, groups with alternatives (the first is taken), and the quantifiers
 * ? * + {n} {n,} {n,m} (their minimum, at least one for +). Undefined when out of reach.
 */
export function sampleFromPattern(pattern: string, salt = 0): string | undefined {
  let i = 0;
  const fail = (): never => {
    throw new SyntaxError('unsupported pattern');
  };
  const classChar = (body: string): string => {
    if (body.startsWith('^')) {
      const banned = body.slice(1);
      return ['a', 'x', '0', '_'].find((c) => !banned.includes(c)) ?? fail();
    }
    if (body.startsWith('\\d')) return String(salt % 10);
    if (body.startsWith('\\w')) return 'a';
    const first = body.startsWith('\\') ? body.charAt(1) : body.charAt(0);
    return first || fail();
  };
  const escape = (c: string): string => {
    if (c === 'd') return String((salt + 1) % 10);
    if (c === 'w') return 'a';
    if (c === 's') return ' ';
    if (/[DWSbBpP]/.test(c)) return fail();
    return c;
  };
  const sequence = (): string => {
    let out = '';
    while (i < pattern.length && pattern[i] !== ')' && pattern[i] !== '|') {
      let atom: string;
      const c = pattern.charAt(i);
      if (c === '^' || c === '$') {
        i++;
        continue;
      } else if (c === '\\') {
        atom = escape(pattern[i + 1] ?? fail());
        i += 2;
      } else if (c === '[') {
        const end = pattern.indexOf(']', i + 2);
        if (end < 0) fail();
        atom = classChar(pattern.slice(i + 1, end));
        i = end + 1;
      } else if (c === '(') {
        i++;
        if (pattern.startsWith('?:', i)) i += 2;
        atom = alternatives();
        if (pattern[i] !== ')') fail();
        i++;
      } else {
        atom = c === '.' ? 'a' : c;
        i++;
      }
      let times = 1;
      const q = pattern[i];
      if (q === '?' || q === '*') {
        times = 0;
        i++;
      } else if (q === '+') {
        i++;
      } else if (q === '{') {
        const close = pattern.indexOf('}', i);
        const m = /^\{(\d+)(,\d*)?\}$/.exec(pattern.slice(i, close + 1));
        if (m === null) fail();
        times = Number(m?.[1]);
        i = close + 1;
      }
      if (pattern[i] === '?') i++; // a lazy quantifier
      out += atom.repeat(times);
    }
    return out;
  };
  const alternatives = (): string => {
    const first = sequence();
    while (pattern[i] === '|') {
      i++;
      sequence();
    }
    return first;
  };
  try {
    const out = alternatives();
    return i === pattern.length && new RegExp(pattern, 'u').test(out) ? out : undefined;
  } catch {
    return undefined;
  }
}

function safeRegExp(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}

/** A value that satisfies `schema` (best effort for `pattern`), filled with the prompt's words. */
export function generateInstance(schema: Record<string, unknown>, ctx: InstanceContext): Json {
  return new InstanceGenerator(schema, ctx).generate();
}
