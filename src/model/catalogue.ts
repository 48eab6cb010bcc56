// The seven models of GET /v1/models, as data. Prices are integer nano-EUR per quoted unit, so every
// cost is integer arithmetic; `toModelObject` renders the spec's `Model` (prices as Money strings).
import type { Model, ModelId, ModelPrice, TextModelId } from '../../generated/model/client/types.gen.ts';
import { formatEur } from '../platform/metering.ts';

export type Dimension = ModelPrice['dimension'];
export type Capability = Model['capabilities'][number];
export type Endpoint = Model['endpoints'][number];

export interface Price {
  dimension: Dimension;
  unit: ModelPrice['unit'];
  /** How many of `dimension` one `unit` is (1,000,000 tokens, 3,600 seconds, 1 image). */
  unitSize: ModelPrice['unit_size'];
  /** The price of one `unit`, in integer nano-EUR. */
  nanoPerUnit: number;
  note: string | null;
}

export interface CatalogueModel {
  id: ModelId;
  type: Model['type'];
  description: string;
  /** Tokens the prompt and completion may hold together; null for models without a token context. */
  contextWindow: number | null;
  realtime: boolean;
  prices: readonly Price[];
  latencyP50Ms: number | null;
  capabilities: readonly Capability[];
  endpoints: readonly Endpoint[];
}

export interface TextModel extends CatalogueModel {
  id: TextModelId;
  type: 'text';
  contextWindow: number;
  latencyP50Ms: number;
  /** nano-EUR per input token (the price per 1M tokens divides exactly). */
  inputNanoPerToken: number;
  /** nano-EUR per output token. */
  outputNanoPerToken: number;
}

/** When the catalogue was published; the `created` of every model. */
export const CATALOGUE_CREATED = 1793491200;
export const OWNED_BY = 'eurus';

const EUR = 1_000_000_000;
const TEXT_CAPABILITIES: readonly Capability[] = ['chat', 'streaming', 'tools', 'json_schema', 'embeddings'];
const TEXT_ENDPOINTS: readonly Endpoint[] = ['/v1/chat/completions', '/v1/responses', '/v1/embeddings'];

function textModel(
  id: TextModelId,
  description: string,
  contextWindow: number,
  inputNanoPerToken: number,
  outputNanoPerToken: number,
  latencyP50Ms: number,
): TextModel {
  const perMillion = (nano: number): number => nano * 1_000_000;
  return {
    id,
    type: 'text',
    description,
    contextWindow,
    realtime: false,
    prices: [
      {
        dimension: 'input_tokens',
        unit: '1M tokens',
        unitSize: 1_000_000,
        nanoPerUnit: perMillion(inputNanoPerToken),
        note: null,
      },
      {
        dimension: 'output_tokens',
        unit: '1M tokens',
        unitSize: 1_000_000,
        nanoPerUnit: perMillion(outputNanoPerToken),
        note: null,
      },
    ],
    latencyP50Ms,
    capabilities: TEXT_CAPABILITIES,
    endpoints: TEXT_ENDPOINTS,
    inputNanoPerToken,
    outputNanoPerToken,
  };
}

export const KING = textModel('king', 'Reasoning, long documents, agents.', 200_000, 3_000, 12_000, 180);
export const QUEEN = textModel('queen', 'The default for chat, routing and tools.', 64_000, 500, 2_000, 90);
export const PRINCE = textModel('prince', 'Classification and extraction.', 16_000, 50, 200, 35);

export const TEXT_MODELS: Readonly<Record<TextModelId, TextModel>> = {
  king: KING,
  queen: QUEEN,
  prince: PRINCE,
};

/** The catalogue in the order of `GET /v1/models`. */
export const CATALOGUE: readonly CatalogueModel[] = [
  KING,
  QUEEN,
  PRINCE,
  {
    id: 'voice',
    type: 'voice',
    description: 'Speech-to-text and text-to-speech in one stream.',
    contextWindow: null,
    realtime: true,
    prices: [
      {
        dimension: 'audio_seconds',
        unit: 'hour',
        unitSize: 3600,
        nanoPerUnit: 6 * EUR,
        note: 'Billed per second of audio, pro rata: audio in for transcriptions, audio out for speech.',
      },
    ],
    latencyP50Ms: 120,
    capabilities: ['speech', 'transcription'],
    endpoints: ['/v1/audio/speech', '/v1/audio/transcriptions', '/v1/realtime'],
  },
  {
    id: 'imagine',
    type: 'image',
    description: 'Image generation.',
    contextWindow: null,
    realtime: false,
    prices: [
      {
        dimension: 'images',
        unit: 'image',
        unitSize: 1,
        nanoPerUnit: 8_000_000,
        note: 'The same price for every size, quality and style.',
      },
    ],
    latencyP50Ms: 1100,
    capabilities: ['image_generation'],
    endpoints: ['/v1/images/generations'],
  },
  {
    id: 'agents',
    type: 'agents',
    description: 'Orchestration runtime.',
    contextWindow: null,
    realtime: false,
    prices: [{ dimension: 'steps', unit: 'step', unitSize: 1, nanoPerUnit: 40_000_000, note: null }],
    latencyP50Ms: null,
    capabilities: ['orchestration'],
    endpoints: ['/v1/responses'],
  },
  {
    id: 'mcp',
    type: 'tools',
    description: 'Tool hub.',
    contextWindow: null,
    realtime: false,
    prices: [
      {
        dimension: 'tool_calls',
        unit: 'call',
        unitSize: 1,
        nanoPerUnit: 0,
        note: 'Included: tool hub calls are not billed.',
      },
    ],
    latencyP50Ms: null,
    capabilities: ['tool_hub'],
    endpoints: ['/v1/mcp'],
  },
];

const BY_ID = new Map<string, CatalogueModel>(CATALOGUE.map((model) => [model.id, model]));

/** The catalogue entry of `id`, or undefined for an unknown id. */
export function getModel(id: string): CatalogueModel | undefined {
  return BY_ID.get(id);
}

export function isTextModelId(id: string): id is TextModelId {
  return id === 'king' || id === 'queen' || id === 'prince';
}

/** The catalogue entry of the text model `id`. */
export function getTextModel(id: TextModelId): TextModel {
  return TEXT_MODELS[id];
}

/** The spec's `Model` object of a catalogue entry, exactly as `GET /v1/models/{model}` returns it. */
export function toModelObject(model: CatalogueModel, engines: EngineNames = {}): Model {
  return {
    id: model.id,
    object: 'model',
    created: CATALOGUE_CREATED,
    owned_by: OWNED_BY,
    type: model.type,
    description: describeModel(model, engines),
    context_window: model.contextWindow,
    realtime: model.realtime,
    pricing: {
      currency: 'EUR',
      prices: model.prices.map((price) => ({
        dimension: price.dimension,
        unit: price.unit,
        unit_size: price.unitSize,
        price: formatEur(price.nanoPerUnit),
        note: price.note,
      })),
    },
    latency_p50_ms: model.latencyP50Ms,
    capabilities: [...model.capabilities],
    endpoints: [...model.endpoints],
  };
}

/** What serves each engine-backed model on this deployment: `reference`/`builtin`, or an upstream's name. */
export type EngineNames = Partial<Record<ModelId, string>>;

const REFERENCE_NOTE =
  'Here the built-in reference engine: text made by rule for tests and demos, repeatable with `seed`; not a language model (MODEL_ENGINES puts it on a real one).';
const BUILT_IN: Partial<Record<ModelId, string>> = {
  king: REFERENCE_NOTE,
  queen: REFERENCE_NOTE,
  prince: REFERENCE_NOTE,
  imagine:
    "Here the built-in painter: landscapes drawn by rule from the prompt's words, not a diffusion model.",
  voice: 'Here the built-in engines: eSpeak NG speaks, PocketSphinx recognises English.',
};

/** The catalogue's description, followed by what serves the model here (engine names from the engines' `describe()`). */
export function describeModel(model: CatalogueModel, engines: EngineNames): string {
  const engine = engines[model.id];
  if (engine === undefined) return model.description;
  const builtIn = engine === 'reference' || engine.startsWith('builtin');
  const note = builtIn ? BUILT_IN[model.id] : 'Here served by an OpenAI-compatible upstream model.';
  return note ? `${model.description} ${note}` : model.description;
}

/** Every model of the catalogue as the spec's `Model`, in catalogue order. */
export function listModelObjects(engines: EngineNames = {}): Model[] {
  return CATALOGUE.map((model) => toModelObject(model, engines));
}

/**
 * What `quantity` of one priced dimension costs in nano-EUR: `quantity / unit_size * price`,
 * rounded half up to a whole nano-EUR (exact, in BigInt). 0 when the model has no such price.
 */
export function dimensionCostNano(model: CatalogueModel, dimension: Dimension, quantity: number): number {
  if (!Number.isSafeInteger(quantity) || quantity < 0) {
    throw new RangeError(`quantity must be a non-negative integer, not ${quantity}`);
  }
  const price = model.prices.find((p) => p.dimension === dimension);
  if (price === undefined || quantity === 0) return 0;
  const numerator = BigInt(quantity) * BigInt(price.nanoPerUnit);
  const size = BigInt(price.unitSize);
  return Number((numerator * 2n + size) / (size * 2n));
}

/** What `ms` milliseconds of audio cost on `voice` (6 EUR an hour, pro rata), in whole nano-EUR. */
export function audioCostNano(ms: number): number {
  const voice = CATALOGUE.find((m) => m.id === 'voice') as CatalogueModel;
  const price = voice.prices[0] as Price;
  return Math.round((Math.round(ms) * price.nanoPerUnit) / (price.unitSize * 1000));
}

/** What `count` images cost on `imagine`, in nano-EUR. */
export function imagesCostNano(count: number): number {
  return dimensionCostNano(CATALOGUE.find((m) => m.id === 'imagine') as CatalogueModel, 'images', count);
}

/**
 * The cost of a chat completion in integer nano-EUR: prompt tokens at the input price plus
 * completion tokens (of all choices) at the output price. `costNano(QUEEN, 24, 8)` is 28000.
 */
export function costNano(model: TextModel | TextModelId, inputTokens: number, outputTokens: number): number {
  const entry = typeof model === 'string' ? TEXT_MODELS[model] : model;
  return (
    dimensionCostNano(entry, 'input_tokens', inputTokens) +
    dimensionCostNano(entry, 'output_tokens', outputTokens)
  );
}
