// A server-sent events parser as the WHATWG HTML standard describes it: lines end in CRLF, LF or
// CR; `:` lines are comments; `data:` lines accumulate (joined by LF); a blank line dispatches.

export interface SseEvent {
  event: string;
  data: string;
  id: string | undefined;
}

export class SseParser {
  #buffer = '';
  #data: string[] = [];
  #event = '';
  #id: string | undefined;
  #started = false;
  #pendingCr = false;

  /** Feeds decoded text; returns the events it completed. */
  push(text: string): SseEvent[] {
    let input = text;
    if (!this.#started && input.length > 0) {
      this.#started = true;
      if (input.charCodeAt(0) === 0xfeff) input = input.slice(1);
    }
    // a CR at the end of the previous piece may be the first half of a CRLF
    if (this.#pendingCr && input.startsWith('\n')) input = input.slice(1);
    this.#pendingCr = false;
    this.#buffer += input;
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.#buffer.length; i++) {
      const c = this.#buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.#line(this.#buffer.slice(start, i), events);
      if (c === 13) {
        if (i + 1 === this.#buffer.length) this.#pendingCr = true;
        else if (this.#buffer.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    this.#buffer = this.#buffer.slice(start);
    return events;
  }

  /** The end of the stream: an event without its closing blank line is dropped, as the standard says. */
  end(): SseEvent[] {
    this.#buffer = '';
    this.#data = [];
    return [];
  }

  #line(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.#data.length > 0) {
        events.push({ event: this.#event || 'message', data: this.#data.join('\n'), id: this.#id });
      }
      this.#data = [];
      this.#event = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
    else if (field === 'id' && !value.includes('\0')) this.#id = value;
  }
}
