import { describe, expect, it } from 'vitest';
import { ApiError } from '../platform/errors.ts';
import { checkTemplate, fill, type MergeValues } from './templates.ts';

const values: MergeValues = {
  company_name: 'Müller & Söhne <GmbH>',
  legal_name: 'Müller & Söhne GmbH',
  city: 'Berlin',
  postal_code: '10115',
  country: 'DE',
  website: '',
  activity: 'Plumbing, heat and air-conditioning installation',
  sender_name: 'Anna Keller',
  unsubscribe_url: 'https://directory.example.eu/v1/unsubscribe/x',
};

describe('campaign templates', () => {
  it('fills every field, spaces inside the braces allowed', () => {
    expect(fill('Hallo {{company_name}} in {{ city }} ({{country}}{{website}})', values)).toBe(
      'Hallo Müller & Söhne <GmbH> in Berlin (DE)',
    );
  });

  it('escapes the values in HTML, not the template', () => {
    expect(fill('<b>{{company_name}}</b>', values, true)).toBe('<b>Müller &amp; Söhne &lt;GmbH&gt;</b>');
  });

  it('names an unknown field and the template it is in', () => {
    let error: unknown;
    try {
      checkTemplate('Hi {{first_name}}, {{city}}', 'follow_ups[1].body_text');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 400,
      code: 'unknown_merge_field',
      param: 'follow_ups[1].body_text',
    });
    expect((error as Error).message).toContain('{{first_name}}');
    expect(() =>
      checkTemplate('{{ company_name }} {{unsubscribe_url}} { not a field }', 'subject'),
    ).not.toThrow();
  });
});
