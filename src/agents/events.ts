// One builder for both answers of /v1/responses: the runtime tells it what happens (an item
// starts, text arrives, a call's arguments arrive, an item ends, the response ends) and it keeps
// the Response object up to date and, when a sink is attached, emits the `response.*` events in
// the order the OpenAI API uses, numbered from 0. A buffered answer is the same builder without
// a sink, so both always agree.
import type {
  Response,
  ResponseMcpCall,
  ResponseMcpListTools,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseStreamEventData,
} from '../../generated/model/client/types.gen.ts';
import { newId } from '../platform/ids.ts';
import { pieces } from '../model/engines/reference.ts';

export type StreamEvent = ResponseStreamEventData;
export type EventSink = (event: StreamEvent) => void;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

type FunctionCallItem = Extract<ResponseOutputItem, { type: 'function_call' }>;
type Lifecycle = 'response.queued' | 'response.created' | 'response.in_progress';
type Ending = 'response.completed' | 'response.incomplete' | 'response.failed';

/** A deep copy, so an emitted snapshot never changes under a consumer that keeps it. */
function copy<T>(value: T): T {
  return structuredClone(value);
}

export class ResponseBuilder {
  readonly response: Response;
  #sink: EventSink | undefined;
  #sequence = 0;

  constructor(response: Response, sink?: EventSink) {
    this.response = response;
    this.#sink = sink;
  }

  /** Events emitted so far. */
  get sequence(): number {
    return this.#sequence;
  }

  #emit(event: DistributiveOmit<StreamEvent, 'sequence_number'>): void {
    const sequence = this.#sequence++;
    this.#sink?.({ ...event, sequence_number: sequence } as StreamEvent);
  }

  lifecycle(type: Lifecycle): void {
    this.#emit({ type, response: copy(this.response) });
  }

  #add(item: ResponseOutputItem): number {
    const index = this.response.output.length;
    this.response.output.push(item);
    this.#emit({ type: 'response.output_item.added', output_index: index, item: copy(item) });
    return index;
  }

  #done(index: number): void {
    const item = this.response.output[index];
    if (item !== undefined)
      this.#emit({ type: 'response.output_item.done', output_index: index, item: copy(item) });
  }

  // --- messages -------------------------------------------------------------------------------

  /** Starts an assistant message with one empty text part; returns its output index. */
  startMessage(id = newId('msg')): number {
    const item: ResponseOutputMessage & { type: 'message' } = {
      type: 'message',
      id,
      role: 'assistant',
      status: 'in_progress',
      content: [],
    };
    const index = this.#add(item);
    item.content.push({ type: 'output_text', text: '', annotations: [] });
    this.#emit({
      type: 'response.content_part.added',
      output_index: index,
      item_id: item.id,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    return index;
  }

  #message(index: number): ResponseOutputMessage {
    const item = this.response.output[index];
    if (item?.type !== 'message') throw new Error(`output ${index} is not a message`);
    return item;
  }

  text(index: number, delta: string): void {
    if (delta === '') return;
    const item = this.#message(index);
    const part = item.content[0];
    if (part === undefined) return;
    part.text += delta;
    this.#emit({
      type: 'response.output_text.delta',
      output_index: index,
      item_id: item.id,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  finishMessage(index: number, status: 'completed' | 'incomplete' = 'completed'): void {
    const item = this.#message(index);
    const part = item.content[0] ?? { type: 'output_text' as const, text: '', annotations: [] };
    this.#emit({
      type: 'response.output_text.done',
      output_index: index,
      item_id: item.id,
      content_index: 0,
      text: part.text,
      logprobs: [],
    });
    this.#emit({
      type: 'response.content_part.done',
      output_index: index,
      item_id: item.id,
      content_index: 0,
      part: copy(part),
    });
    item.status = status;
    this.#done(index);
  }

  // --- function calls -------------------------------------------------------------------------

  startFunctionCall(callId: string, name: string, id = newId('fc')): number {
    const item: FunctionCallItem = {
      type: 'function_call',
      id,
      call_id: callId,
      name,
      arguments: '',
      status: 'in_progress',
    };
    return this.#add(item);
  }

  #call(index: number): FunctionCallItem | ResponseMcpCall {
    const item = this.response.output[index];
    if (item?.type !== 'function_call' && item?.type !== 'mcp_call') {
      throw new Error(`output ${index} is not a call`);
    }
    return item;
  }

  arguments(index: number, delta: string): void {
    if (delta === '') return;
    const item = this.#call(index);
    item.arguments += delta;
    this.#emit({
      type:
        item.type === 'function_call'
          ? 'response.function_call_arguments.delta'
          : 'response.mcp_call_arguments.delta',
      output_index: index,
      item_id: item.id,
      delta,
    });
  }

  #argumentsDone(index: number): void {
    const item = this.#call(index);
    this.#emit({
      type:
        item.type === 'function_call'
          ? 'response.function_call_arguments.done'
          : 'response.mcp_call_arguments.done',
      output_index: index,
      item_id: item.id,
      arguments: item.arguments,
    });
  }

  finishFunctionCall(index: number, status: 'completed' | 'incomplete' = 'completed'): void {
    this.#argumentsDone(index);
    const item = this.#call(index);
    item.status = status;
    this.#done(index);
  }

  // --- mcp ------------------------------------------------------------------------------------

  /** An `mcp_list_tools` item, whole (listing happens before the item is shown). */
  listedTools(
    serverLabel: string,
    tools: ResponseMcpListTools['tools'],
    error: string | null,
    id = newId('mcpl'),
  ): void {
    const item: ResponseMcpListTools & { type: 'mcp_list_tools' } = {
      type: 'mcp_list_tools',
      id,
      server_label: serverLabel,
      tools: [],
      error: null,
    };
    const index = this.#add(item);
    this.#emit({ type: 'response.mcp_list_tools.in_progress', output_index: index, item_id: item.id });
    item.tools = tools;
    item.error = error;
    this.#emit({
      type: error === null ? 'response.mcp_list_tools.completed' : 'response.mcp_list_tools.failed',
      output_index: index,
      item_id: item.id,
    });
    this.#done(index);
  }

  startMcpCall(serverLabel: string, name: string, id = newId('mcp')): number {
    const item: ResponseMcpCall & { type: 'mcp_call' } = {
      type: 'mcp_call',
      id,
      server_label: serverLabel,
      name,
      arguments: '',
      output: null,
      error: null,
      status: 'in_progress',
    };
    return this.#add(item);
  }

  /** The arguments are complete and the call starts. */
  callingMcp(index: number): void {
    this.#argumentsDone(index);
    const item = this.#call(index);
    this.#emit({ type: 'response.mcp_call.in_progress', output_index: index, item_id: item.id });
    item.status = 'calling';
  }

  finishMcpCall(index: number, result: { output: string } | { error: string }): void {
    const item = this.#call(index) as ResponseMcpCall;
    const failed = 'error' in result;
    item.output = failed ? null : result.output;
    item.error = failed ? result.error : null;
    item.status = failed ? 'failed' : 'completed';
    this.#emit({
      type: failed ? 'response.mcp_call.failed' : 'response.mcp_call.completed',
      output_index: index,
      item_id: item.id,
    });
    this.#done(index);
  }

  // --- the end --------------------------------------------------------------------------------

  end(type: Ending): void {
    this.#emit({ type, response: copy(this.response) });
  }

  /** The stream failed after the 200; the last event. */
  error(code: string | null, message: string): void {
    this.#emit({ type: 'error', code, message, param: null });
  }
}

/**
 * The events of a finished response again, as a stream would have sent them (each text and
 * each arguments text in word pieces): what `GET /v1/responses/{id}?stream=true` replays.
 */
export function replayEvents(response: Response): StreamEvent[] {
  const events: StreamEvent[] = [];
  const start: Response = {
    ...copy(response),
    status: 'in_progress',
    output: [],
    usage: null,
    completed_at: null,
  };
  if (response.error === null) start.error = null;
  start.incomplete_details = null;
  const builder = new ResponseBuilder(start, (event) => events.push(event));
  builder.lifecycle('response.created');
  builder.lifecycle('response.in_progress');
  for (const item of response.output) {
    if (item.type === 'message') {
      const index = builder.startMessage(item.id);
      for (const piece of pieces(item.content.map((c) => c.text).join(''))) builder.text(index, piece);
      builder.finishMessage(index, item.status === 'incomplete' ? 'incomplete' : 'completed');
    } else if (item.type === 'function_call') {
      const index = builder.startFunctionCall(item.call_id, item.name, item.id);
      for (const piece of argumentPieces(item.arguments)) builder.arguments(index, piece);
      builder.finishFunctionCall(index, item.status === 'incomplete' ? 'incomplete' : 'completed');
    } else if (item.type === 'mcp_call') {
      const index = builder.startMcpCall(item.server_label, item.name, item.id);
      for (const piece of argumentPieces(item.arguments)) builder.arguments(index, piece);
      builder.callingMcp(index);
      builder.finishMcpCall(
        index,
        item.error !== null ? { error: item.error } : { output: item.output ?? '' },
      );
    } else {
      builder.listedTools(item.server_label, item.tools, item.error ?? null, item.id);
    }
  }
  const ending =
    response.status === 'completed'
      ? 'response.completed'
      : response.status === 'incomplete'
        ? 'response.incomplete'
        : 'response.failed';
  events.push({ type: ending, sequence_number: builder.sequence, response: copy(response) });
  return events;
}

export function argumentPieces(json: string): string[] {
  const chars = Array.from(json);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += 8) out.push(chars.slice(i, i + 8).join(''));
  return out;
}
