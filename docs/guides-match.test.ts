// The docs test's reading of a guide and its comparison of a block's output with the guide's:
// a difference must be a problem, or docs/guides.test.ts passes on a guide that is wrong.
import { describe, expect, it } from 'vitest';
import { type Block, matchOutput, parseGuide } from '../contract-tests/support/guides.ts';

const output = (lang: string, code: string): Block => ({ guide: 'g.md', line: 1, lang, code });

describe('a block whose output differs from the guide is a problem', () => {
  it('a JSON value the guide shows otherwise', () => {
    const match = matchOutput(
      output('json', '{"total": 3, "name": "Bäckerei Kraus"}'),
      '{"total": 0, "name": "Bäckerei Kraus"}',
    );
    expect(match.problems).toEqual(['$.total: the guide shows 3, the run printed 0']);
  });

  it('a field the run printed that the guide does not show, unless "..." elides', () => {
    const shown = output('json', '{"id": "lst_01JDNPZX45HY43KWJRP1XPA7Z3"}');
    const printed = '{"id": "lst_01KB00000000000000000000AA", "city": "Lille"}';
    expect(matchOutput(shown, printed).problems).toEqual([
      '$: the run printed fields the guide does not show: city',
    ]);
    const elided = output('json', '{"id": "lst_01JDNPZX45HY43KWJRP1XPA7Z3", "...": "..."}');
    const match = matchOutput(elided, printed);
    expect(match.problems).toEqual([]);
    // the id this run printed replaces the guide's in later blocks
    expect([...match.substitutions]).toEqual([
      ['lst_01JDNPZX45HY43KWJRP1XPA7Z3', 'lst_01KB00000000000000000000AA'],
    ]);
  });

  it('fewer items than the guide shows, and a field the run lacks', () => {
    const match = matchOutput(
      output('json', '{"data": [{"a": 1}, {"a": 2}], "b": true}'),
      '{"data": [{"a": 1}]}',
    );
    expect(match.problems).toEqual([
      '$.data: the guide shows 2 items, the run printed 1',
      '$: the guide shows "b", the run printed no such field',
    ]);
  });

  it('no JSON at all where the guide shows JSON', () => {
    expect(matchOutput(output('json', '{"a": 1}'), 'curl: (7) Failed to connect').problems).toHaveLength(1);
  });

  it('a text line the guide shows otherwise, and lines it does not show', () => {
    expect(matchOutput(output('text', 'Lisbon\n'), 'The capital of Portugal\n').problems).toEqual([
      'line 1: the guide shows "Lisbon", the run printed "The capital of Portugal"',
    ]);
    expect(matchOutput(output('text', 'a\n'), 'a\nb\n').problems).toEqual([
      'the run printed 1 more lines than the guide shows',
    ]);
    expect(matchOutput(output('text', 'a\n...\nz\n'), 'a\nb\nc\nz\n').problems).toEqual([]);
    expect(matchOutput(output('text', 'a\n...\nz\n'), 'a\nb\nc\ny\n').problems).toHaveLength(1);
  });

  it('a text line that differs in more than its date (guides write dates relative to the run)', () => {
    const shown = output('text', '{"amount":"1480.00","available_from":"2026-12-11"}\n');
    expect(matchOutput(shown, '{"amount":"1480.00","available_from":"2027-12-11"}').problems).toEqual([]);
    expect(matchOutput(shown, '{"amount":"150.00","available_from":"2027-12-11"}').problems).toHaveLength(1);
  });
});

describe('reading a guide', () => {
  const guide = [
    '*Not run by the docs test: it needs a HubSpot account.*',
    '',
    '```sh',
    'curl hubspot',
    '```',
    '',
    '```sh',
    'curl "$DIRECTORY_API/v1/search"',
    '```',
    '',
    '```json',
    '{"total": 3}',
    '```',
    '',
    'Then:',
    '',
    '```js',
    '// receiver.mjs: the receiver',
    'console.log(1);',
    '```',
  ].join('\n');

  it('takes the marker, the output under a block and a program named for a later block', () => {
    const [marked, search, shown, program] = parseGuide('g.md', guide);
    expect(marked).toMatchObject({ line: 3, notRun: 'it needs a HubSpot account.' });
    expect(search!.notRun).toBeUndefined();
    expect(search!.output).toBe(shown);
    expect(program).toMatchObject({ lang: 'js', file: 'receiver.mjs' });
  });
});
