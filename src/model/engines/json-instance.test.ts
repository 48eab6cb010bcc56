import { describe, expect, it } from 'vitest';
import { newAjv } from '../testing/spec.ts';
import { generateInstance, sampleFromPattern, type InstanceContext } from './json-instance.ts';
import { seededRandom } from './random.ts';

function context(seed = 'x'): InstanceContext {
  return {
    random: seededRandom(seed),
    terms: ['ferry', 'timetable', 'Porto'],
    names: ['Porto', 'Vila Nova'],
    numbers: [4],
    phrase: 'the ferry timetable in Porto',
  };
}

const SCHEMAS: Record<string, Record<string, unknown>> = {
  scalars: {
    type: 'object',
    properties: {
      id: { type: 'string', pattern: '^trip_[a-z0-9]{6}$' },
      seats: { type: 'integer', minimum: 1, maximum: 9 },
      price: { type: 'number', exclusiveMinimum: 0, maximum: 20, multipleOf: 0.5 },
      when: { type: 'string', format: 'date-time' },
      email: { type: 'string', format: 'email' },
      site: { type: 'string', format: 'uri' },
      ref: { type: 'string', format: 'uuid' },
      code: { type: 'string', minLength: 12, maxLength: 14 },
      flag: { type: ['boolean', 'null'] },
      fixed: { const: 'v1' },
    },
    required: ['id', 'seats', 'price', 'when', 'email', 'site', 'ref', 'code', 'flag', 'fixed'],
    additionalProperties: false,
  },
  nesting: {
    $defs: {
      stop: {
        type: 'object',
        properties: { city: { type: 'string' }, order: { type: 'integer', minimum: 0 } },
        required: ['city', 'order'],
        additionalProperties: false,
      },
    },
    type: 'object',
    properties: {
      stops: { type: 'array', items: { $ref: '#/$defs/stop' }, minItems: 3, maxItems: 5 },
      pair: {
        type: 'array',
        prefixItems: [{ type: 'string' }, { type: 'integer' }],
        items: false,
        minItems: 2,
      },
      kind: { oneOf: [{ type: 'string', enum: ['ferry', 'bus'] }, { type: 'integer' }] },
      extra: {
        allOf: [
          { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
          { required: ['b'] },
        ],
      },
      tags: { type: 'array', items: { enum: ['x', 'y', 'z'] }, uniqueItems: true, minItems: 3 },
      meta: { type: 'object', minProperties: 2, additionalProperties: { type: 'integer' } },
    },
    required: ['stops', 'pair', 'kind', 'extra', 'tags', 'meta'],
  },
  recursive: {
    type: 'object',
    properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } },
    required: ['name', 'children'],
  },
};

describe('generateInstance', () => {
  it.each(Object.keys(SCHEMAS))('satisfies the %s schema', (name) => {
    const schema = SCHEMAS[name] as Record<string, unknown>;
    const validate = newAjv().compile(schema);
    for (const seed of ['a', 'b', 'c', 'd']) {
      const value = generateInstance(schema, context(seed));
      expect(validate(value), `${JSON.stringify(value)} ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it('fills strings and numbers from the prompt', () => {
    const value = generateInstance(
      {
        type: 'object',
        properties: {
          city: { type: 'string' },
          company_name: { type: 'string' },
          people: { type: 'integer' },
        },
        required: ['city', 'company_name', 'people'],
      },
      context(),
    );
    expect(value).toEqual({ city: 'Porto', company_name: 'Vila Nova', people: 4 });
  });

  it('leaves out an optional property no candidate can satisfy', () => {
    const value = generateInstance(
      { type: 'object', properties: { odd: { type: 'string', pattern: '^\\p{Lu}{5}$' } }, required: [] },
      context(),
    );
    expect(value).toEqual({});
  });
});

describe('sampleFromPattern', () => {
  it.each([
    '^[0-9]{4}-[0-9]{3}$',
    '^call_[0-9A-Za-z]{24}$',
    '^(fp|sk)_[a-z]+$',
    '^\\d{2}:\\d{2}$',
    'ab?c*d+',
  ])('builds a string matching %s', (pattern) => {
    const value = sampleFromPattern(pattern);
    expect(value).toBeDefined();
    expect(new RegExp(pattern, 'u').test(value ?? '')).toBe(true);
  });
});
