// Server-sent events from an upstream, read by eventsource-parser (the WHATWG parsing: CRLF, LF
// or CR line ends, `:` comments, `data:` lines joined by LF, a blank line dispatches, one BOM
// dropped), handed out as the events each piece of text completed.
import { createParser, type EventSourceParser } from 'eventsource-parser';

export interface SseEvent {
  event: string;
  data: string;
  /** The last event id the stream set (it carries over to later events, as in EventSource). */
  id: string | undefined;
}

export class SseParser {
  readonly #parser: EventSourceParser;
  #completed: SseEvent[] = [];
  #lastId: string | undefined;

  constructor() {
    this.#parser = createParser({
      onId: (id) => {
        this.#lastId = id;
      },
      onEvent: (event) => {
        this.#completed.push({ event: event.event ?? 'message', data: event.data, id: this.#lastId });
      },
    });
  }

  /** Feeds decoded text; returns the events it completed. */
  push(text: string): SseEvent[] {
    this.#parser.feed(text);
    const events = this.#completed;
    this.#completed = [];
    return events;
  }

  /** The end of the stream: an event without its closing blank line is dropped, as the standard says. */
  end(): SseEvent[] {
    this.#parser.reset();
    this.#completed = [];
    return [];
  }
}
