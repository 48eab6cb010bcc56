// Campaign templates: `{{field}}` merge fields, checked when a campaign is created (an unknown
// field is a 400 naming it) and filled per recipient when a message is composed. In HTML the
// values are escaped; in text and subjects they go in as they are (the transport encodes
// headers). Nothing else is interpreted: no expressions, no loops, no partials.
import { BadRequestError } from '../platform/errors.ts';

export const MERGE_FIELDS = [
  'company_name',
  'legal_name',
  'city',
  'postal_code',
  'country',
  'website',
  'activity',
  'sender_name',
  'unsubscribe_url',
] as const;

export type MergeField = (typeof MERGE_FIELDS)[number];
export type MergeValues = Record<MergeField, string>;

/** A merge field, `{{ name }}`: the name is what is between the braces, trimmed. */
const FIELD = /\{\{([^{}]*)\}\}/g;
const KNOWN = new Set<string>(MERGE_FIELDS);

/** Throws a 400 naming the first unknown field of `template`; `param` says which template. */
export function checkTemplate(template: string, param: string): void {
  for (const match of template.matchAll(FIELD)) {
    const name = (match[1] ?? '').trim();
    if (!KNOWN.has(name)) {
      throw new BadRequestError(
        'unknown_merge_field',
        `${param} uses the merge field {{${name}}}, which does not exist; the fields are ${MERGE_FIELDS.map((f) => `{{${f}}}`).join(', ')}.`,
        { param },
      );
    }
  }
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);

/** The template with each field replaced by its value (HTML-escaped when `html`). */
export function fill(template: string, values: MergeValues, html = false): string {
  return template.replace(FIELD, (whole, inside: string) => {
    const name = inside.trim();
    const value = KNOWN.has(name) ? values[name as MergeField] : whole;
    return html ? escapeHtml(value) : value;
  });
}
