// Imports listings from JSON Lines: one Listing (the API's schema, as GET /v1/places/details
// returns it) per line. Every line is validated first against the bundled spec's Listing
// schema (Ajv, JSON Schema 2020-12, with formats); ids must be new and unique. Any bad line is
// reported with its line number and nothing is applied; otherwise all lines are inserted in
// one transaction. Reads the file twice (validate, then insert), so memory stays bounded.
//
// src/services/import-listings.ts is its command.
import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Listing } from '../../generated/directory/client/types.gen.ts';
import { type Db } from '../platform/db.ts';
import { splitDistrict } from './data/place-names.ts';
import { fromListing, insertListings, type ListingRecord } from './store.ts';

const SPEC = fileURLToPath(new URL('../../generated/directory/openapi.json', import.meta.url));

let validator: ((value: unknown) => string[]) | undefined;
/** Validates a value against the spec's Listing schema; returns the problems, empty when valid. */
export function validateListing(value: unknown): string[] {
  if (!validator) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema(JSON.parse(readFileSync(SPEC, 'utf8')) as object, 'directory');
    const validate = ajv.getSchema('directory#/components/schemas/Listing');
    if (!validate) throw new Error('Listing schema not found in the bundled spec');
    validator = (v) =>
      validate(v)
        ? []
        : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
  }
  return validator(value);
}

export interface LineError {
  line: number;
  errors: string[];
}

async function* lines(file: string): AsyncGenerator<[number, string]> {
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })) {
    n++;
    if (line.trim()) yield [n, line];
  }
}

/**
 * The address as the post writes it: a city that is a district of a municipality (`Tegel`,
 * near Berlin) becomes the district, and the municipality the city.
 */
export function withDistrict(record: ListingRecord): ListingRecord {
  const address = record.address;
  if (address.district) return record;
  const split = splitDistrict(address.city, address.country, record.geo);
  return {
    ...record,
    address: { ...address, district: split?.district ?? null, city: split?.city ?? address.city },
  };
}

export async function importListings(
  db: Db,
  file: string,
  options: { batchSize?: number } = {},
): Promise<{ imported: number; errors: LineError[] }> {
  const errors: LineError[] = [];
  const ids = new Map<string, number>();
  for await (const [n, line] of lines(file)) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      errors.push({ line: n, errors: [`not JSON: ${(err as Error).message}`] });
      continue;
    }
    const problems = validateListing(value);
    const id = (value as { id?: unknown }).id;
    if (typeof id === 'string') {
      const first = ids.get(id);
      if (first !== undefined) problems.push(`/id repeats the id of line ${first}`);
      else ids.set(id, n);
    }
    if (problems.length) errors.push({ line: n, errors: problems });
  }
  if (ids.size > 0) {
    const all = [...ids.keys()];
    for (let i = 0; i < all.length; i += 10_000) {
      const existing = await db.query<{ id: string }>('select id from listings where id = any($1::text[])', [
        all.slice(i, i + 10_000),
      ]);
      for (const { id } of existing)
        errors.push({ line: ids.get(id) ?? 0, errors: [`/id ${id} already exists`] });
    }
  }
  if (errors.length) return { imported: 0, errors: errors.sort((a, b) => a.line - b.line) };

  const batchSize = options.batchSize ?? 1000;
  let imported = 0;
  await db.transaction(async (tx) => {
    let batch: ListingRecord[] = [];
    for await (const [, line] of lines(file)) {
      batch.push(withDistrict(fromListing(JSON.parse(line) as Listing)));
      if (batch.length >= batchSize) {
        await insertListings(tx, batch);
        imported += batch.length;
        batch = [];
      }
    }
    await insertListings(tx, batch);
    imported += batch.length;
  });
  await db.query('analyze listings'); // fresh statistics for the planner (PGlite has no autovacuum)
  return { imported, errors: [] };
}
