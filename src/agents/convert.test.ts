import { describe, expect, it } from 'vitest';
import { assertOutputsAnswerCalls, chatMessages, inputItems } from './convert.ts';

const name = (label: string, tool: string) => `${label}__${tool}`;

describe('the Responses API as chat messages', () => {
  it('gives a text input one user message after the instructions', () => {
    expect(chatMessages('Be brief.', inputItems('Hello'), name)).toEqual([
      { role: 'developer', content: 'Be brief.' },
      { role: 'user', content: 'Hello' },
    ]);
  });

  it('groups one turn of calls into one assistant message, results after it, mcp results included', () => {
    const history = [
      ...inputItems([{ role: 'user', content: 'Bakeries in Munich and the weather?' }]),
      {
        type: 'mcp_call' as const,
        id: 'mcp_01JDA9K3M5P7R9T1V3X5Z7B9D1',
        server_label: 'eurus',
        name: 'search',
        arguments: '{"query":"bakery"}',
        output: '{"data":[]}',
        error: null,
        status: 'completed' as const,
      },
      ...inputItems([
        { type: 'function_call', call_id: 'call_w', name: 'get_weather', arguments: '{"city":"Munich"}' },
        { type: 'function_call_output', call_id: 'call_w', output: '{"temperature_c":7}' },
      ]),
    ];
    expect(chatMessages(undefined, history, name)).toEqual([
      { role: 'user', content: 'Bakeries in Munich and the weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_01JDA9K3M5P7R9T1V3X5Z7B9D1',
            type: 'function',
            function: { name: 'eurus__search', arguments: '{"query":"bakery"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_01JDA9K3M5P7R9T1V3X5Z7B9D1', content: '{"data":[]}' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_w',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Munich"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_w', content: '{"temperature_c":7}' },
    ]);
  });

  it('refuses a function_call_output that answers no call', () => {
    expect(() =>
      assertOutputsAnswerCalls(
        inputItems([{ type: 'function_call_output', call_id: 'call_x', output: '1' }]),
      ),
    ).toThrow(/call_x/);
  });
});
