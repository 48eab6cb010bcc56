// The Responses API mapped onto chat completions, so every engine (the reference engine, an
// OpenAI-compatible upstream) serves it: input items become messages, function tools and the
// tools of mcp servers become function tools, `text.format` becomes `response_format`.
import type {
  ChatCompletionRequestMessage,
  ChatCompletionRequestToolCall,
  ChatCompletionTool,
  CreateResponseRequest,
  ResponseFormat,
  ResponseInputContent,
  ResponseItem,
  ResponseItemReference,
  ResponseOutputItem,
  ResponseOutputText,
} from '../../generated/model/client/types.gen.ts';
import { BadRequestError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';

/** An item of a conversation: a stored input item or an output item of an earlier response. */
export type HistoryItem = ResponseItem | ResponseOutputItem;

/** The `item_reference` items of the input, with their index. */
export function referencedItems(input: CreateResponseRequest['input']): { index: number; id: string }[] {
  if (input === undefined || typeof input === 'string') return [];
  return input.flatMap((item, index) => (isReference(item) ? [{ index, id: item.id }] : []));
}

type InputItem = Exclude<NonNullable<CreateResponseRequest['input']>, string>[number];

function isReference(item: InputItem): item is ResponseItemReference {
  return (
    item.type === 'item_reference' || item.type === null || (!('role' in item) && item.type === undefined)
  );
}

/** A stored item as an input item: an output message becomes a stored assistant message. */
export function asInputItem(item: HistoryItem): ResponseItem {
  if (item.type !== 'message') return item;
  return {
    type: 'message',
    id: item.id,
    role: item.role,
    status: 'completed',
    content: item.content.map((part) =>
      part.type === 'output_text' ? { type: 'output_text', text: part.text, annotations: [] } : part,
    ),
  };
}

/**
 * The request's input as stored items, each with an id (`msg_`, `fc_`, `fco_`); an
 * `item_reference` stands for the stored item it names (`references`, by id).
 */
export function inputItems(
  input: CreateResponseRequest['input'],
  references: ReadonlyMap<string, HistoryItem> = new Map(),
): ResponseItem[] {
  if (input === undefined) return [];
  if (typeof input === 'string') {
    return [
      {
        type: 'message',
        id: newId('msg'),
        role: 'user',
        status: 'completed',
        content: [{ type: 'input_text', text: input }],
      },
    ];
  }
  return input.map((item): ResponseItem => {
    if (isReference(item)) {
      const found = references.get(item.id);
      if (found === undefined) throw new Error(`unresolved item_reference ${item.id}`);
      return asInputItem(found);
    }
    if (item.type === 'function_call') {
      return {
        type: 'function_call',
        id: item.id ?? newId('fc'),
        call_id: item.call_id,
        name: item.name,
        arguments: item.arguments,
        status: item.status ?? 'completed',
      };
    }
    if (item.type === 'function_call_output') {
      return {
        type: 'function_call_output',
        id: item.id ?? newId('fco'),
        call_id: item.call_id,
        output: item.output,
        status: 'completed',
      };
    }
    if (item.type === 'reasoning' || item.type === 'mcp_call' || item.type === 'mcp_list_tools') return item;
    const textType = item.role === 'assistant' ? 'output_text' : 'input_text';
    return {
      type: 'message',
      id: item.id !== undefined && /^msg_[0-9A-Za-z]{26}$/.test(item.id) ? item.id : newId('msg'),
      role: item.role,
      status: 'completed',
      content: typeof item.content === 'string' ? [{ type: textType, text: item.content }] : item.content,
    };
  });
}

/** The text of message parts or of a function's output parts, joined. */
export function partsText(parts: string | readonly (ResponseInputContent | ResponseOutputText)[]): string {
  if (typeof parts === 'string') return parts;
  return parts.map((part) => (part.type === 'refusal' ? part.refusal : part.text)).join('');
}

/**
 * Every `function_call_output` must answer a function call of the conversation: a 400 naming
 * the call id otherwise (the model could not tell what it answers).
 */
export function assertOutputsAnswerCalls(history: readonly HistoryItem[]): void {
  const calls = new Set(history.flatMap((item) => (item.type === 'function_call' ? [item.call_id] : [])));
  for (const item of history) {
    if (item.type === 'function_call_output' && !calls.has(item.call_id)) {
      throw new BadRequestError(
        'unknown_call_id',
        `No function call with call_id '${item.call_id}' precedes this function_call_output.`,
        { param: 'input' },
      );
    }
  }
}

/** The chat tool call id of an mcp call item (its own id is not of the `call_` shape). */
function mcpCallId(itemId: string): string {
  return `call_${itemId.slice(4)}`;
}

/**
 * The conversation as chat messages: instructions first (as a developer message), then each
 * item; consecutive calls of one turn form one assistant message with `tool_calls`, and an mcp
 * call's result (or error) follows as a tool message. `toolName` gives the name the model knows
 * an mcp tool by.
 */
export function chatMessages(
  instructions: string | null | undefined,
  history: readonly HistoryItem[],
  toolName: (serverLabel: string, name: string) => string,
): ChatCompletionRequestMessage[] {
  const messages: ChatCompletionRequestMessage[] = [];
  if (instructions !== undefined && instructions !== null && instructions !== '') {
    messages.push({ role: 'developer', content: instructions });
  }
  let calls: ChatCompletionRequestToolCall[] | undefined;
  let results: ChatCompletionRequestMessage[] = [];
  const flush = () => {
    if (calls !== undefined) messages.push({ role: 'assistant', content: null, tool_calls: calls });
    messages.push(...results);
    calls = undefined;
    results = [];
  };
  for (const item of history) {
    if (item.type === 'function_call' || item.type === 'mcp_call') {
      const call: ChatCompletionRequestToolCall =
        item.type === 'function_call'
          ? { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } }
          : {
              id: mcpCallId(item.id),
              type: 'function',
              function: { name: toolName(item.server_label, item.name), arguments: item.arguments },
            };
      if (results.length > 0 && item.type === 'function_call') flush();
      (calls ??= []).push(call);
      if (item.type === 'mcp_call') {
        results.push({
          role: 'tool',
          tool_call_id: call.id,
          content: item.error !== null ? `Error: ${item.error}` : (item.output ?? ''),
        });
      }
      continue;
    }
    if (item.type === 'function_call_output') {
      // results follow their calls; a result of an earlier turn closes the open turn first
      if (calls !== undefined && !calls.some((c) => c.id === item.call_id)) flush();
      results.push({ role: 'tool', tool_call_id: item.call_id, content: partsText(item.output) });
      if (calls === undefined) {
        messages.push(...results);
        results = [];
      }
      continue;
    }
    // a reasoning item passed back is kept, never shown to the model again
    if (item.type === 'reasoning') continue;
    flush();
    if (item.type === 'mcp_list_tools') continue;
    const text = partsText(item.content);
    if (item.role === 'assistant') messages.push({ role: 'assistant', content: text });
    else messages.push({ role: item.role, content: text });
  }
  flush();
  return messages;
}

/** `text.format` as a chat `response_format`. */
export function responseFormat(text: CreateResponseRequest['text']): ResponseFormat | undefined {
  const format = text?.format;
  if (format === undefined || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(format.description === undefined ? {} : { description: format.description }),
      ...(format.strict === undefined ? {} : { strict: format.strict }),
    },
  };
}

/** A tool the model sees, and what runs it. */
export interface ModelTool {
  chat: ChatCompletionTool;
  /** A function the client runs, or a tool of an mcp server run here. */
  kind: 'function' | 'mcp';
  /** The mcp server's label and the tool's name there. */
  serverLabel?: string;
  name: string;
}

/** The request's function tools as chat completions tools, in order. */
export function functionTools(tools: CreateResponseRequest['tools']): ModelTool[] {
  return (tools ?? []).flatMap((tool): ModelTool[] =>
    tool.type === 'function'
      ? [
          {
            kind: 'function',
            name: tool.name,
            chat: {
              type: 'function',
              function: {
                name: tool.name,
                ...(tool.description === undefined || tool.description === null
                  ? {}
                  : { description: tool.description }),
                ...(tool.parameters === undefined || tool.parameters === null
                  ? {}
                  : { parameters: tool.parameters }),
              },
            },
          },
        ]
      : [],
  );
}
