import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.ts';

describe('SseParser', () => {
  it('dispatches on blank lines, skips comments, joins multi-line data', () => {
    const parser = new SseParser();
    const events = parser.push(
      ': keep-alive\n\ndata: {"a":\ndata: 1}\n\nevent: ping\ndata:x\nid: 7\n\ndata: [DONE]\n\n',
    );
    expect(events).toEqual([
      { event: 'message', data: '{"a":\n1}', id: undefined },
      { event: 'ping', data: 'x', id: '7' },
      { event: 'message', data: '[DONE]', id: '7' },
    ]);
  });

  it('handles CRLF and CR line ends, split anywhere, and a BOM', () => {
    const text = '\uFEFFdata: one\r\n\r\ndata: two\r\rdata: three\n\n';
    for (let size = 1; size <= text.length; size++) {
      const parser = new SseParser();
      const events = [];
      for (let i = 0; i < text.length; i += size) events.push(...parser.push(text.slice(i, i + size)));
      expect(events.map((e) => e.data)).toEqual(['one', 'two', 'three']);
    }
  });

  it('drops an event that never got its blank line', () => {
    const parser = new SseParser();
    expect(parser.push('data: half')).toEqual([]);
    expect(parser.end()).toEqual([]);
  });
});
