// The built-in reference engine: offline and deterministic for a given `seed`. It answers in
// readable sentences built from the prompt's own words, honours max tokens (counted with the real
// tokenizer), stop sequences, n, temperature/top_p, tools and response formats, and can replay a
// model's latency profile (first token after its p50, then tokens at a realistic pace).
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  ChatCompletionRequestMessage,
  ChatCompletionTool,
  CreateChatCompletionRequest,
  TextModelId,
} from '../../../generated/model/client/types.gen.ts';
import { TEXT_MODELS } from '../catalogue.ts';
import {
  completionBudget,
  contentText,
  countCompletionTokens,
  countPromptTokens,
  countTokens,
  truncateCounted,
  truncateToTokens,
} from '../tokens.ts';
import { generateInstance, type InstanceContext, type Json } from './json-instance.ts';
import { type Random, seededRandom } from './random.ts';
import { embedOne, truncateVector } from '../../embeddings/index.ts';
import type { ChatOptions, EmbedRequest, EmbedResult, Engine, EngineEvent, FinishReason } from './engine.ts';
import {
  capitalize,
  entities,
  keyTerms,
  listPhrase,
  numbers,
  questionSubject,
  stem,
  words,
} from './words.ts';

export type LatencyProfile = 'none' | 'p50';

export interface ReferenceEngineOptions {
  /** `p50`: the first token after the model's p50 latency, then tokens at a realistic pace. Default `none`. */
  latency?: LatencyProfile;
}

/** Output pace of the latency profile, tokens per second. */
const TOKENS_PER_SECOND: Record<TextModelId, number> = { king: 45, queen: 90, prince: 180 };
/** Sentences of a text answer (min, max) per model. */
const SENTENCES: Record<TextModelId, [number, number]> = { king: [6, 10], queen: [3, 5], prince: [2, 3] };
/** Yield to the event loop every this many deltas so a disconnect is noticed promptly. */
const YIELD_EVERY = 16;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

interface Prompt {
  /** Text of the last user message. */
  question: string;
  /** Text of every user, system and developer message. */
  all: string;
  terms: string[];
  names: string[];
  numbers: number[];
  /** The last message, when it is a tool result: the function name and its content. */
  toolResult: { name: string; content: string } | undefined;
  /** Every tool result after the last assistant turn (parallel calls answer together), in order. */
  toolResults: { name: string; content: string }[];
}

interface PlannedChoice {
  content: string;
  /** The content's tokens, when the budget's check counted them. */
  contentTokens?: number | undefined;
  toolCalls: { id: string; name: string; arguments: string }[];
  finish: FinishReason;
}

function readPrompt(messages: readonly ChatCompletionRequestMessage[]): Prompt {
  const users = messages.filter((m) => m.role === 'user');
  const question = contentText(users[users.length - 1]?.content);
  const all = messages
    .filter((m) => m.role === 'user' || m.role === 'system' || m.role === 'developer')
    .map((m) => contentText(m.content))
    .join('\n');
  const calls = messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []));
  const toolResults: Prompt['toolResults'] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== 'tool') break;
    const call = calls.find((c) => c.id === message.tool_call_id);
    toolResults.unshift({ name: call?.function.name ?? 'the tool', content: contentText(message.content) });
  }
  const toolResult = toolResults[toolResults.length - 1];
  const userText = users.map((m) => contentText(m.content)).join('\n');
  const source = question !== '' ? question : userText !== '' ? userText : all;
  let terms = keyTerms(source);
  // a short question borrows words from the rest of the conversation
  if (terms.length < 2) terms = terms.concat(keyTerms(all).filter((t) => !terms.includes(t)));
  const names = entities(source);
  return {
    question,
    all,
    terms: terms.slice(0, 24),
    names: names.length > 0 ? names : entities(all),
    numbers: numbers(source),
    toolResult,
    toolResults,
  };
}

/**
 * Picks a candidate index: candidates are in order of likelihood, weighted exp(-i / temperature),
 * cut to the nucleus `topP`. Temperature 0 is greedy (shifted by `offset`, so n choices differ).
 */
function sample(random: Random, count: number, temperature: number, topP: number, offset: number): number {
  if (count <= 1) return 0;
  if (temperature <= 0.01) return offset % count;
  // the weights are recomputed at each pass rather than kept in arrays (this runs a few times per
  // sentence); the sums are taken in the same order, so the draw is the same to the last bit
  const weight = (i: number) => Math.exp((-0.35 * i) / temperature);
  let sum = 0;
  for (let i = 0; i < count; i++) sum += weight(i);
  let kept = 0;
  let keptSum = 0;
  let mass = 0;
  while (kept < count) {
    const w = weight(kept++);
    keptSum += w;
    mass += w / sum;
    if (mass >= topP) break;
  }
  let r = random.next() * keptSum;
  for (let i = 0; i < kept; i++) {
    r -= weight(i);
    if (r <= 0) return (i + offset) % count;
  }
  return (kept - 1 + offset) % count;
}

const OPENINGS_QUESTION = [
  (s: string) => `You are asking about ${s}.`,
  (s: string) => `Here is a short answer on ${s}.`,
  (s: string) => `Good question: ${s}.`,
  (s: string) => `Let us look at ${s}.`,
  (s: string) => `To answer your question on ${s}, a few points matter.`,
];
const OPENINGS_TOPIC = [
  (s: string) => `Here is my take on ${s}.`,
  (s: string) => `On ${s}, a few points stand out.`,
  (s: string) => `Let us start with ${s}.`,
  (s: string) => `About ${s}: here is a short overview.`,
];
const OPENINGS_REQUEST = [
  (s: string) => `You asked me to ${s}.`,
  (s: string) => `Sure, here is how I would ${s}.`,
  (s: string) => `Happy to ${s}.`,
];
const IMPERATIVE =
  /^(?:please\s+)?(explain|describe|tell|list|summari[sz]e|write|give|say|translate|compare|show|outline|suggest|recommend|draft|define|classify|extract|find|name|help)\b/i;

/** "Explain how photosynthesis works." gives "explain how photosynthesis works". */
function requestedAction(text: string): string | undefined {
  const sentence =
    text
      .trim()
      .split(/(?<=[.!])\s+|\n+/)[0]
      ?.trim() ?? '';
  if (!IMPERATIVE.test(sentence) || words(sentence).length > 20) return undefined;
  return lowerFirst(sentence.replace(/^please\s+/i, '').replace(/(?<![.!])[.!]+$/, ''));
}

const ELABORATIONS = [
  (a: string, b: string) => `The key point about ${a} is how it relates to ${b}.`,
  (a: string, b: string) => `When thinking about ${a}, it helps to consider ${b} as well.`,
  (a: string, b: string) => `In most cases, ${a} depends on the context in which ${b} comes up.`,
  (a: string, b: string) => `A useful way to approach ${a} is to start from what is known about ${b}.`,
  (a: string, b: string) => `It is worth checking the details of ${a} before drawing conclusions about ${b}.`,
  (a: string, b: string) =>
    `${capitalize(a)} and ${b} are closely connected here, so they are best considered together.`,
  (a: string, b: string) => `Sources on ${a} usually also cover ${b}.`,
  (a: string, b: string) => `For a precise answer on ${a}, the specifics of ${b} matter.`,
  (a: string, b: string) => `There are a few aspects of ${a} worth noting, starting with ${b}.`,
  (a: string, b: string) => `The short version: ${a} is central, and ${b} adds the necessary context.`,
];
const REASONING = ['First', 'Next', 'Then', 'After that', 'Beyond that', 'On top of this', 'Finally'];
const CLOSINGS = [
  (a: string) => `If you tell me more about ${a}, I can go into more detail.`,
  (a: string) => `Let me know if you would like more on ${a}.`,
  (a: string) => `I hope this helps with ${a}.`,
  (a: string) => `Happy to expand on any part of ${a}.`,
];
const GREETINGS = [
  'Hello! How can I help you today?',
  'Hi there. What would you like to talk about?',
  'Hello. Ask me anything, and I will do my best to help.',
];

const NUMBER_WORDS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  twelve: 12,
  twenty: 20,
};
/** Words of a request that ask for something rather than name it ("find", "show me"). */
const ASKING = new Set(
  'find search look show list get give tell need want please near nearby around open now closed today me us some any'.split(
    ' ',
  ),
);

function lowerFirst(text: string): string {
  return /^\p{Lu}\p{Ll}/u.test(text) ? text.charAt(0).toLowerCase() + text.slice(1) : text;
}

/** The items of a result that lists things (`data`, `results`, `items`, or an array), when they have names. */
function listedItems(value: Json): { [key: string]: Json }[] | undefined {
  const isItem = (v: Json): v is { [key: string]: Json } =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.name === 'string';
  let list: Json | undefined = value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    list = value.data ?? value.results ?? value.items ?? value.hits ?? value.places;
  }
  if (!Array.isArray(list)) return undefined;
  const items = list.filter(isItem);
  return items.length > 0 ? items : undefined;
}

/** A result that lists things and found none (`{"results": []}`, `[]`). */
function isEmptyList(value: Json): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (value === null || typeof value !== 'object') return false;
  const list = value.data ?? value.results ?? value.items ?? value.hits ?? value.places;
  return Array.isArray(list) && list.length === 0;
}

/** "Bäckerei Huber (Tal 12, München; rating 4.6; open now)". */
function describeItem(item: { [key: string]: Json }): string {
  const details: string[] = [];
  const address = item.address;
  if (typeof address === 'string') details.push(address);
  else if (address !== null && typeof address === 'object' && !Array.isArray(address)) {
    const line = [address.street ?? address.line1, address.city]
      .filter((p) => typeof p === 'string' && p !== '')
      .join(', ');
    if (line !== '') details.push(line);
  } else if (typeof item.city === 'string') details.push(item.city);
  const signals = item.signals !== null && typeof item.signals === 'object' ? item.signals : item;
  if (!Array.isArray(signals)) {
    if (typeof signals.distance_km === 'number') details.push(`${signals.distance_km} km away`);
    if (typeof signals.rating === 'number') details.push(`rating ${signals.rating}`);
    if (signals.open_now === true) details.push('open now');
  }
  return details.length > 0 ? `${String(item.name)} (${details.join('; ')})` : String(item.name);
}

function describeToolResult(content: string): string {
  try {
    const value = JSON.parse(content) as Json;
    if (isEmptyList(value)) return 'no results';
    const items = listedItems(value);
    if (items !== undefined) {
      const shown = items.slice(0, 5).map(describeItem);
      const more = items.length > 5 ? `, and ${items.length - 5} more` : '';
      return `${items.length === 1 ? 'one result' : `${items.length} results`}: ${listPhrase(shown)}${more}`;
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const parts = Object.entries(value)
        .slice(0, 6)
        .map(
          ([key, v]) =>
            `${key.replace(/[_-]+/g, ' ')} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`,
        );
      return listPhrase(parts);
    }
    return typeof value === 'string' ? value : JSON.stringify(value);
  } catch {
    return content.trim().slice(0, 300);
  }
}

function writeText(
  model: TextModelId,
  prompt: Prompt,
  random: Random,
  temperature: number,
  topP: number,
  offset: number,
): string {
  const pick = <T>(items: readonly T[]): T =>
    items[sample(random, items.length, temperature, topP, offset)] as T;
  const terms = prompt.terms;
  if (terms.length === 0 && prompt.toolResult === undefined) return pick(GREETINGS);
  const sentences: string[] = [];
  const [low, high] = SENTENCES[model];
  // the usual length is the middle of the model's range; sampling spreads it
  const middle = Math.round((low + high) / 2);
  const lengths = [
    middle,
    ...Array.from({ length: high - low + 1 }, (_, i) => low + i).filter((l) => l !== middle),
  ];
  const count = lengths[sample(random, lengths.length, temperature, topP, 0)] ?? middle;
  const main = terms[0] ?? 'this';
  if (prompt.toolResults.length > 0) {
    // an answer from tool results: what they say, then a closing on what was asked about
    for (const result of prompt.toolResults.slice(0, 4)) {
      sentences.push(`According to ${result.name}: ${describeToolResult(result.content)}.`);
    }
    const topic = terms.find(
      (t) => !ASKING.has(t.toLowerCase()) && NUMBER_WORDS[t.toLowerCase()] === undefined,
    );
    sentences.push(pick(CLOSINGS)(topic ?? 'this'));
    return sentences.join(' ');
  } else {
    const subject = questionSubject(prompt.question);
    const request = requestedAction(prompt.question);
    if (subject !== undefined) sentences.push(pick(OPENINGS_QUESTION)(lowerFirst(subject)));
    else if (request !== undefined) sentences.push(pick(OPENINGS_REQUEST)(request));
    else sentences.push(pick(OPENINGS_TOPIC)(listPhrase(terms.slice(0, 3))));
  }
  const second = (i: number): string => terms[(i + 1) % Math.max(terms.length, 1)] ?? 'the wider context';
  let unused = [...ELABORATIONS];
  for (let i = 0; sentences.length < count - 1; i++) {
    const a = terms.length > 0 ? (terms[i % terms.length] as string) : main;
    const shift = sample(random, terms.length, temperature, topP, 0);
    let b = terms.length > 1 ? second(i + shift) : 'the wider context';
    if (stem(b) === stem(a)) b = 'the wider context';
    if (unused.length === 0) unused = [...ELABORATIONS];
    const [template] = unused.splice(sample(random, unused.length, temperature, topP, offset), 1);
    let sentence = (template ?? pick(ELABORATIONS))(a, b);
    if (model === 'king' && i < REASONING.length) {
      // keep the capital of a name that opens the sentence ("Portugal and …"), lower any other
      const keep = /^\p{Lu}/u.test(a) && sentence.startsWith(a);
      const rest = keep ? sentence : sentence.charAt(0).toLowerCase() + sentence.slice(1);
      sentence = `${REASONING[i] ?? 'Also'}, ${rest}`;
    }
    sentences.push(sentence);
  }
  sentences.push(pick(CLOSINGS)(main));
  if (model === 'king' && sentences.length > 4) {
    const middle = Math.ceil(sentences.length / 2);
    return `${sentences.slice(0, middle).join(' ')}\n\n${sentences.slice(middle).join(' ')}`;
  }
  return sentences.join(' ');
}

function toolScore(tool: ChatCompletionTool, prompt: Prompt): number {
  const text = prompt.question.toLowerCase();
  const name = tool.function.name;
  let score = 0;
  if (text.includes(name.toLowerCase()) || text.includes(name.replace(/[_-]+/g, ' ').toLowerCase()))
    score += 10;
  const promptStems = new Set(words(prompt.question).map(stem));
  const nameParts = name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter((p) => p.length >= 3);
  for (const part of keyTerms(nameParts.join(' '))) if (promptStems.has(stem(part))) score += 2;
  for (const term of keyTerms(tool.function.description ?? '')) if (promptStems.has(stem(term))) score += 1;
  return score;
}

/** The tools to call, by the request's tool_choice, or none. */
function chooseTools(request: CreateChatCompletionRequest, prompt: Prompt): ChatCompletionTool[] {
  const tools = request.tools ?? [];
  if (tools.length === 0) return [];
  const choice = request.tool_choice ?? 'auto';
  if (choice === 'none') return [];
  if (typeof choice === 'object')
    return tools.filter((t) => t.function.name === choice.function.name).slice(0, 1);
  const scored = tools
    .map((tool) => ({ tool, score: toolScore(tool, prompt) }))
    .sort((a, b) => b.score - a.score);
  const parallel = request.parallel_tool_calls !== false;
  if (choice === 'auto') {
    if (prompt.toolResult !== undefined) return [];
    const chosen = scored.filter((s) => s.score >= 2).map((s) => s.tool);
    return parallel ? chosen.slice(0, 3) : chosen.slice(0, 1);
  }
  // required: the best match, and with parallel calls every other tool the prompt names
  const best = scored[0]?.tool;
  if (best === undefined) return [];
  const named = parallel
    ? scored
        .slice(1)
        .filter((s) => s.score >= 10)
        .map((s) => s.tool)
    : [];
  return [best, ...named].slice(0, 3);
}

function stopSequences(stop: CreateChatCompletionRequest['stop']): string[] {
  if (stop === null || stop === undefined) return [];
  return (typeof stop === 'string' ? [stop] : stop).filter((s) => s !== '');
}

/** Applies stop sequences and the token budget to a text: whichever comes first ends it. */
function limitText(
  text: string,
  stops: readonly string[],
  budget: number,
): { text: string; finish: FinishReason; tokens: number | undefined } {
  let cut = -1;
  for (const stop of stops) {
    const at = text.indexOf(stop);
    if (at >= 0 && (cut < 0 || at < cut)) cut = at;
  }
  const limited = truncateCounted(text, budget);
  const stopFits = cut >= 0 && cut <= limited.text.length;
  if (stopFits) return { text: text.slice(0, cut), finish: 'stop', tokens: undefined };
  if (limited.text.length < text.length)
    return { text: limited.text, finish: 'length', tokens: limited.tokens };
  return { text, finish: 'stop', tokens: limited.tokens };
}

/** Splits text into stream pieces of about a word each (leading whitespace kept with its word). */
export function pieces(text: string): string[] {
  const parts: string[] = text.match(/(?<!\s)\s*\S+/g) ?? [];
  const trailing = text.slice(parts.join('').length);
  if (trailing !== '') {
    if (parts.length > 0) parts[parts.length - 1] += trailing;
    else parts.push(trailing);
  }
  return parts;
}

function argumentPieces(json: string): string[] {
  const chars = Array.from(json);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += 8) out.push(chars.slice(i, i + 8).join(''));
  return out.length > 0 ? out : [''];
}

function toolCallId(random: Random): string {
  let id = 'call_';
  for (let i = 0; i < 24; i++) id += BASE62[random.int(0, 61)];
  return id;
}

/**
 * The context for a tool call's arguments: the prompt's words, numbers written as words too
 * ("three" fills `limit: 3`), optional properties only where the prompt speaks to them, and
 * for a query the words that name what is sought ("bakeries"), not places, counts or verbs.
 */
function toolCallContext(prompt: Prompt, random: Random): InstanceContext {
  const base = instanceContext(prompt, random);
  const spoken = words(prompt.question !== '' ? prompt.question : prompt.all);
  const named = new Set(prompt.names.flatMap((n) => words(n)).map(stem));
  const topic = prompt.terms.filter(
    (t) => !named.has(stem(t)) && !ASKING.has(t.toLowerCase()) && NUMBER_WORDS[t.toLowerCase()] === undefined,
  );
  const counted = spoken.map((w) => NUMBER_WORDS[w.toLowerCase()]).filter((n) => n !== undefined);
  return {
    ...base,
    numbers: [...prompt.numbers, ...counted],
    phrase: topic.slice(0, 3).join(' ') || base.phrase,
    promptStems: new Set(spoken.map(stem)),
  };
}

function instanceContext(prompt: Prompt, random: Random): InstanceContext {
  const phrase =
    questionSubject(prompt.question) ?? (listPhrase(prompt.terms.slice(0, 4)) || prompt.question.trim());
  const tokens = prompt.question
    .split(/[\s,;]+/)
    .map((t) => t.replace(/^[("'“]+|(?<![)"'”.!?:])[)"'”.!?:]+$/g, ''));
  return { random, terms: prompt.terms, names: prompt.names, numbers: prompt.numbers, phrase, tokens };
}

function planChoice(
  request: CreateChatCompletionRequest,
  prompt: Prompt,
  random: Random,
  index: number,
  budget: number,
): PlannedChoice {
  const temperature = request.temperature ?? 1;
  const topP = request.top_p ?? 1;
  const tools = chooseTools(request, prompt);
  if (tools.length > 0) {
    const calls = tools.map((tool) => ({
      id: toolCallId(random),
      name: tool.function.name,
      arguments: JSON.stringify(
        generateInstance(
          tool.function.parameters ?? { type: 'object', properties: {} },
          toolCallContext(prompt, random),
        ),
      ),
    }));
    if (countCompletionTokens([{ content: '', toolCalls: calls }]) <= budget) {
      return { content: '', toolCalls: calls, finish: 'tool_calls' };
    }
    // out of tokens mid-call, as a real model would be: the arguments are cut off
    const first = calls[0] as PlannedChoice['toolCalls'][number];
    const room = Math.max(
      0,
      budget - countCompletionTokens([{ content: '', toolCalls: [{ ...first, arguments: '' }] }]),
    );
    return {
      content: '',
      toolCalls: [{ ...first, arguments: truncateToTokens(first.arguments, room) }],
      finish: 'length',
    };
  }
  const format = request.response_format;
  let text: string;
  if (format?.type === 'json_schema') {
    const schema = format.json_schema.schema ?? { type: 'object' };
    text = JSON.stringify(generateInstance(schema, instanceContext(prompt, random)));
  } else if (format?.type === 'json_object') {
    const answer = writeText(request.model, prompt, random, temperature, topP, index);
    text = JSON.stringify({ answer, topics: prompt.terms.slice(0, 5) });
  } else {
    text = writeText(request.model, prompt, random, temperature, topP, index);
  }
  const limited = limitText(text, stopSequences(request.stop), budget);
  return { content: limited.text, contentTokens: limited.tokens, toolCalls: [], finish: limited.finish };
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

export class ReferenceEngine implements Engine {
  readonly name = 'reference';
  readonly latency: LatencyProfile;

  constructor(options: ReferenceEngineOptions = {}) {
    this.latency = options.latency ?? 'none';
  }

  fingerprint(model: TextModelId): string {
    return `fp_${model}_ref_1`;
  }

  /**
   * Embeddings from the built-in engine that the directory's semantic search uses too (the
   * same vectors for the three text models). Fewer `dimensions` keep the first ones of the
   * 384 and normalise again, as the spec says.
   */
  embed(request: EmbedRequest): Promise<EmbedResult> {
    return Promise.resolve({
      vectors: request.texts.map((text) => truncateVector(embedOne(text), request.dimensions)),
    });
  }

  /** The answer the engine gives, as whole choices (what `chat` streams piece by piece). */
  plan(request: CreateChatCompletionRequest, promptTokens?: number): PlannedChoice[] {
    const prompt = readPrompt(request.messages);
    const counted = promptTokens ?? countPromptTokens(request);
    const budget = completionBudget(request.model, counted, request);
    const seed = request.seed ?? null;
    // a seed repeats the answer to the same request; without one, a random draw is all it takes
    const base =
      seed === null
        ? `random:${randomInt(2 ** 47)}`
        : [
            `seed:${seed}`,
            request.model,
            JSON.stringify(request.messages),
            JSON.stringify(request.tools ?? null),
            JSON.stringify(request.tool_choice ?? null),
            JSON.stringify(request.response_format ?? null),
          ].join('|');
    const n = request.n ?? 1;
    const choices: PlannedChoice[] = [];
    const seen = new Set<string>();
    const said = (c: PlannedChoice) => JSON.stringify([c.content, c.toolCalls.map((call) => call.arguments)]);
    for (let index = 0; index < n; index++) {
      let planned = planChoice(request, prompt, seededRandom(`${base}|${index}`), index, budget);
      // n answers should differ; retry with another draw when one repeats an earlier one
      for (let attempt = 1; attempt < 8 && seen.size > 0 && seen.has(said(planned)); attempt++) {
        planned = planChoice(
          request,
          prompt,
          seededRandom(`${base}|${index}|${attempt}`),
          index + attempt,
          budget,
        );
      }
      if (n > 1) seen.add(said(planned));
      choices.push(planned);
    }
    return choices;
  }

  async *chat(request: CreateChatCompletionRequest, options: ChatOptions = {}): AsyncGenerator<EngineEvent> {
    const signal = options.signal;
    const promptTokens = options.promptTokens ?? countPromptTokens(request);
    const choices = this.plan(request, promptTokens);
    const paced = this.latency === 'p50';
    const rate = TOKENS_PER_SECOND[request.model];
    const wait = async (ms: number): Promise<void> => {
      if (ms <= 0) return;
      await sleep(ms, undefined, signal === undefined ? {} : { signal });
    };

    if (signal?.aborted) throw abortError(signal);
    if (paced) {
      const timing = seededRandom(`timing|${request.seed ?? randomInt(2 ** 47)}|${request.model}`);
      const p50 = TEXT_MODELS[request.model].latencyP50Ms;
      await wait(Math.round(p50 * Math.exp(0.25 * timing.normal())));
    } else if (options.whole === true) {
      // the whole answer at once: each call and each content in one piece, nothing to pace
      for (const [index, choice] of choices.entries()) {
        for (const [callIndex, call] of choice.toolCalls.entries()) {
          yield {
            type: 'tool_call',
            choice: index,
            index: callIndex,
            id: call.id,
            name: call.name,
            arguments: call.arguments,
          };
        }
        if (choice.content !== '') yield { type: 'content', choice: index, text: choice.content };
        yield { type: 'finish', choice: index, reason: choice.finish };
      }
      yield { type: 'usage', promptTokens, completionTokens: countCompletionTokens(choices) };
      return;
    }

    // structured output streams in pieces as tool arguments do (its JSON has no spaces to cut at):
    // each chunk so far a prefix of the JSON text that ends as the object
    const format = request.response_format?.type;
    const contentPieces = format === 'json_schema' || format === 'json_object' ? argumentPieces : pieces;
    // per choice: its deltas, then its finish; choices are interleaved as a real server does
    const queues: EngineEvent[][] = choices.map((choice, index) => {
      const events: EngineEvent[] = [];
      choice.toolCalls.forEach((call, callIndex) => {
        argumentPieces(call.arguments).forEach((piece, i) => {
          events.push(
            i === 0
              ? {
                  type: 'tool_call',
                  choice: index,
                  index: callIndex,
                  id: call.id,
                  name: call.name,
                  arguments: piece,
                }
              : { type: 'tool_call', choice: index, index: callIndex, arguments: piece },
          );
        });
      });
      for (const piece of choice.content === '' ? [] : contentPieces(choice.content))
        events.push({ type: 'content', choice: index, text: piece });
      events.push({ type: 'finish', choice: index, reason: choice.finish });
      return events;
    });
    let emitted = 0;
    for (let step = 0; queues.some((q) => step < q.length); step++) {
      for (const queue of queues) {
        const event = queue[step];
        if (event === undefined) continue;
        if (signal?.aborted) throw abortError(signal);
        if (paced && event.type !== 'finish') {
          const text =
            event.type === 'content' ? event.text : event.type === 'tool_call' ? (event.arguments ?? '') : '';
          await wait((Math.max(1, countTokens(text)) / rate) * 1000);
        } else if (++emitted % YIELD_EVERY === 0) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (signal?.aborted) throw abortError(signal);
        }
        yield event;
      }
    }
    yield {
      type: 'usage',
      promptTokens,
      completionTokens: countCompletionTokens(choices),
    };
  }
}
