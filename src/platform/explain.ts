// Says why a value breaks a schema of the bundled spec in one sentence a person can act on.
// The validator reports every branch of a union it tried (`input: must be string; input[2].role:
// must have required property 'role'; ...`); here a union is read as a client means it: the
// branch its tag (`type`, `role`, or the discriminator) names, else the branch it got furthest
// into, and only that branch's first real mismatch is told. A tag no branch takes is named.
import { fullFormats } from 'ajv-formats/dist/formats.js';

type Schema = Record<string, unknown>;
type Path = (string | number)[];

export interface Mismatch {
  /** Where, as a `param`: `input[2].content[0].type`; '' for the value itself. */
  param: string;
  message: string;
}

/** Which way the value travels: a request may not carry readOnly fields, a response writeOnly ones. */
export type Direction = 'request' | 'response';

interface Found {
  path: Path;
  message: string;
}

export function paramOf(path: Path): string {
  return path.reduce<string>(
    (acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part),
    '',
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

const ARTICLE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function typesOf(schema: Schema): string[] | undefined {
  const type = schema.type;
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type as string[];
  return undefined;
}

function fitsType(types: readonly string[], value: unknown): boolean {
  const actual = jsonType(value);
  return types.includes(actual) || (actual === 'integer' && types.includes('number'));
}

function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function show(value: unknown): string {
  return typeof value === 'string' ? `\`${value}\`` : JSON.stringify(value);
}

export class Explainer {
  readonly #root: Schema;
  readonly #direction: Direction;

  constructor(root: Schema, direction: Direction) {
    this.#root = root;
    this.#direction = direction;
  }

  /** The one mismatch to tell, or undefined when the value fits `schema`. */
  explain(schema: unknown, value: unknown, at: Path = []): Mismatch | undefined {
    const found = this.#check(schema, value, at, 0);
    return found === undefined ? undefined : { param: paramOf(found.path), message: found.message };
  }

  #resolve(schema: unknown, depth = 0): Schema {
    if (!isObject(schema)) return schema === false ? { not: {} } : {};
    const ref = schema.$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#/') || depth > 32) return schema;
    let target: unknown = this.#root;
    for (const part of ref.slice(2).split('/')) {
      target = isObject(target) ? target[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    }
    const siblings = { ...schema };
    delete siblings.$ref;
    const resolved = this.#resolve(target, depth + 1);
    return Object.keys(siblings).length === 0 ? resolved : { ...resolved, ...siblings };
  }

  #check(raw: unknown, value: unknown, path: Path, depth: number): Found | undefined {
    if (raw === true || raw === undefined) return undefined;
    if (depth > 64) return undefined;
    const schema = this.#resolve(raw);
    const fail = (message: string, where: Path = path): Found => ({ path: where, message });

    const union = (schema.oneOf ?? schema.anyOf) as unknown[] | undefined;
    if (Array.isArray(union)) {
      const found = this.#union(schema, union, value, path, depth);
      if (found !== undefined) return found;
    }
    for (const part of (schema.allOf as unknown[] | undefined) ?? []) {
      const found = this.#check(part, value, path, depth + 1);
      if (found !== undefined) return found;
    }
    if (schema.not !== undefined && this.#check(schema.not, value, path, depth + 1) === undefined) {
      return fail('is not allowed here');
    }
    const types = typesOf(schema);
    if (types !== undefined && !fitsType(types, value)) {
      return fail(`must be ${types.map((t) => ARTICLE[t] ?? t).join(' or ')}`);
    }
    if ('const' in schema && !equal(schema.const, value)) return fail(`must be ${show(schema.const)}`);
    if (Array.isArray(schema.enum) && !schema.enum.some((option) => equal(option, value))) {
      return fail(
        `must be one of: ${schema.enum
          .filter((o) => o !== null)
          .map(show)
          .join(', ')}`,
      );
    }
    if (typeof value === 'string') return this.#string(schema, value, path);
    if (typeof value === 'number') return this.#number(schema, value, path);
    if (Array.isArray(value)) return this.#array(schema, value, path, depth);
    if (isObject(value)) return this.#object(schema, value, path, depth);
    return undefined;
  }

  #string(schema: Schema, value: string, path: Path): Found | undefined {
    const length = [...value].length;
    if (typeof schema.minLength === 'number' && length < schema.minLength) {
      return {
        path,
        message:
          schema.minLength === 1
            ? 'must not be empty'
            : `must be at least ${schema.minLength} characters long`,
      };
    }
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) {
      return { path, message: `must be at most ${schema.maxLength} characters long` };
    }
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) {
      return { path, message: `must match the pattern ${schema.pattern}` };
    }
    if (typeof schema.format === 'string') {
      const format = (fullFormats as Record<string, unknown>)[schema.format];
      const test =
        typeof format === 'function'
          ? (format as (v: string) => boolean)
          : format instanceof RegExp
            ? (v: string) => format.test(v)
            : isObject(format) && typeof format.validate === 'function'
              ? (format.validate as (v: string) => boolean)
              : isObject(format) && format.validate instanceof RegExp
                ? (v: string) => (format.validate as RegExp).test(v)
                : undefined;
      if (test !== undefined && !test(value)) return { path, message: `must be a valid ${schema.format}` };
    }
    return undefined;
  }

  #number(schema: Schema, value: number, path: Path): Found | undefined {
    if (typeof schema.minimum === 'number' && value < schema.minimum)
      return { path, message: `must be at least ${schema.minimum}` };
    if (typeof schema.maximum === 'number' && value > schema.maximum)
      return { path, message: `must be at most ${schema.maximum}` };
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) {
      return { path, message: `must be more than ${schema.exclusiveMinimum}` };
    }
    if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) {
      return { path, message: `must be less than ${schema.exclusiveMaximum}` };
    }
    if (
      typeof schema.multipleOf === 'number' &&
      Math.abs(value / schema.multipleOf - Math.round(value / schema.multipleOf)) > 1e-9
    ) {
      return { path, message: `must be a multiple of ${schema.multipleOf}` };
    }
    return undefined;
  }

  #array(schema: Schema, value: unknown[], path: Path, depth: number): Found | undefined {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) {
      return {
        path,
        message: schema.minItems === 1 ? 'must not be empty' : `must hold at least ${schema.minItems} items`,
      };
    }
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) {
      return {
        path,
        message: schema.maxItems === 0 ? 'must be empty' : `must hold at most ${schema.maxItems} items`,
      };
    }
    if (schema.uniqueItems === true) {
      const seen = new Set<string>();
      for (const [i, item] of value.entries()) {
        const key = JSON.stringify(item);
        if (seen.has(key))
          return { path: [...path, i], message: 'repeats an earlier item (items must be unique)' };
        seen.add(key);
      }
    }
    if (schema.items !== undefined) {
      for (const [i, item] of value.entries()) {
        const found = this.#check(schema.items, item, [...path, i], depth + 1);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  }

  #object(schema: Schema, value: Record<string, unknown>, path: Path, depth: number): Found | undefined {
    const properties = isObject(schema.properties) ? schema.properties : {};
    for (const name of (schema.required as string[] | undefined) ?? []) {
      if (!(name in value)) return { path: [...path, name], message: 'is required' };
    }
    if (typeof schema.minProperties === 'number' && Object.keys(value).length < schema.minProperties) {
      return {
        path,
        message: `must have at least ${schema.minProperties} field${schema.minProperties === 1 ? '' : 's'}`,
      };
    }
    if (typeof schema.maxProperties === 'number' && Object.keys(value).length > schema.maxProperties) {
      return { path, message: `must have at most ${schema.maxProperties} fields` };
    }
    const known = Object.keys(properties);
    for (const [name, item] of Object.entries(value)) {
      const property = properties[name];
      if (property === undefined) {
        if (schema.additionalProperties === false) {
          const title = typeof schema.title === 'string' ? ` of ${schema.title}` : '';
          return {
            path: [...path, name],
            message: `is not a field${title} (known: ${known.join(', ') || 'none'})`,
          };
        }
        if (isObject(schema.additionalProperties)) {
          const found = this.#check(schema.additionalProperties, item, [...path, name], depth + 1);
          if (found !== undefined) return found;
        }
        continue;
      }
      const resolved = this.#resolve(property);
      if (this.#direction === 'request' && resolved.readOnly === true) {
        return { path: [...path, name], message: 'is read-only: the server sets it' };
      }
      if (this.#direction === 'response' && resolved.writeOnly === true) {
        return { path: [...path, name], message: 'is write-only and must not be returned' };
      }
      const found = this.#check(property, item, [...path, name], depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** The property whose const or enum tells the branches apart (`type`, `role`), if any. */
  #tagOf(schema: Schema, branches: Schema[]): string | undefined {
    const declared = isObject(schema.discriminator) ? schema.discriminator.propertyName : undefined;
    if (typeof declared === 'string') return declared;
    const objects = branches.filter((b) => isObject(b.properties));
    if (objects.length < 2) return undefined;
    for (const name of ['type', 'role', 'object', 'kind']) {
      if (objects.every((b) => this.#tagValues(b, name) !== undefined)) return name;
    }
    return undefined;
  }

  /** The values a branch's `name` may take (null left out), or undefined when it is no tag there. */
  #tagValues(branch: Schema, name: string): unknown[] | undefined {
    const properties = isObject(branch.properties) ? branch.properties : {};
    if (properties[name] === undefined) return undefined;
    const property = this.#resolve(properties[name]);
    if ('const' in property) return [property.const];
    if (Array.isArray(property.enum)) return property.enum.filter((v) => v !== null);
    return undefined;
  }

  #union(schema: Schema, union: unknown[], value: unknown, path: Path, depth: number): Found | undefined {
    const branches = union.map((b) => this.#resolve(b));
    const results = branches.map((b) => this.#check(b, value, path, depth + 1));
    const passing = results.filter((r) => r === undefined).length;
    if (passing > 0) return undefined;

    let candidates = branches.map((branch, i) => ({ branch, found: results[i] as Found }));
    const tag = this.#tagOf(schema, branches);
    if (tag !== undefined && isObject(value)) {
      const given = value[tag];
      const takes = (b: Schema) => this.#tagValues(b, tag);
      if (given !== undefined && given !== null) {
        const named = candidates.filter(({ branch }) => takes(branch)?.some((v) => equal(v, given)) ?? true);
        const tagged = candidates.filter(({ branch }) => takes(branch) !== undefined);
        if (named.length === 0 || named.every(({ branch }) => takes(branch) === undefined)) {
          const supported = [...new Set(tagged.flatMap(({ branch }) => takes(branch) ?? []))];
          return {
            path,
            message: `${this.#noun(schema, tag)} ${show(given)} is not supported by this server; supported: ${supported.map(String).join(', ')}`,
          };
        }
        candidates = named.filter(({ branch }) => takes(branch) !== undefined);
      } else {
        const untagged = candidates.filter(
          ({ branch }) => !((branch.required as string[] | undefined) ?? []).includes(tag),
        );
        if (untagged.length > 0) candidates = untagged;
      }
    }
    const typed = candidates.filter(({ branch }) => {
      const types = typesOf(branch) ?? (isObject(branch.properties) ? ['object'] : undefined);
      return types === undefined || fitsType(types, value);
    });
    if (typed.length === 0) {
      const types = [
        ...new Set(
          candidates.flatMap(
            ({ branch }) => typesOf(branch) ?? (isObject(branch.properties) ? ['object'] : []),
          ),
        ),
      ];
      if (types.length > 0)
        return { path, message: `must be ${types.map((t) => ARTICLE[t] ?? t).join(' or ')}` };
      return candidates[0]?.found;
    }
    // the branch the value got furthest into tells the real mistake
    let best = typed[0] as (typeof typed)[number];
    for (const candidate of typed.slice(1)) {
      if (candidate.found.path.length > best.found.path.length) best = candidate;
    }
    return best.found;
  }

  #noun(schema: Schema, tag: string): string {
    const title = typeof schema.title === 'string' ? schema.title : '';
    if (tag === 'type' && /Item$/.test(title)) return 'item type';
    if (tag === 'type' && /Content$/.test(title)) return 'content part type';
    if (tag === 'type' && /Tool$/.test(title)) return 'tool type';
    return tag;
  }
}
