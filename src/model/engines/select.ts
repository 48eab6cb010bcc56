// Which engine serves which model, from MODEL_ENGINES (JSON, or the path of a JSON file),
// validated at start-up with errors that name the faulty field. Default: the reference engine
// for king, queen and prince, and the built-in engines for imagine and voice. `default` sets the
// text models only: an upstream that serves chat (vLLM, Ollama) rarely draws or speaks, so the
// media models are put on an upstream by their own keys:
//
//   {"default": {...}, "imagine": {"type": "upstream", "baseUrl": ...}, "voice": {...}}
import { readFileSync } from 'node:fs';
import type { TextModelId } from '../../../generated/model/client/types.gen.ts';
import { ReferenceEngine, type LatencyProfile } from './reference.ts';
import {
  BuiltinImageEngine,
  BuiltinVoiceEngine,
  type ImageEngine,
  type VoiceEngine,
} from '../../media/engines.ts';
import type { Outbound } from '../../platform/outbound.ts';
import type { Engine } from './engine.ts';
import { UpstreamImageEngine, UpstreamVoiceEngine } from './media-upstream.ts';
import { UpstreamEngine, type UpstreamConfig } from './upstream.ts';

export class EngineConfigError extends Error {
  override name = 'EngineConfigError';
}

export interface ReferenceEngineConfig {
  type: 'reference';
  latency: LatencyProfile;
}

export interface UpstreamEngineConfig extends UpstreamConfig {
  type: 'upstream';
}

export type EngineConfig = ReferenceEngineConfig | UpstreamEngineConfig;

/** The engine configuration of each text model, after defaults. */
export type EnginesConfig = Record<TextModelId, EngineConfig>;

const MODELS: readonly TextModelId[] = ['king', 'queen', 'prince'];
const MEDIA_MODELS = ['imagine', 'voice'] as const;
export type MediaModelId = (typeof MEDIA_MODELS)[number];
const DEFAULT_ENGINE: ReferenceEngineConfig = { type: 'reference', latency: 'none' };

type Raw = Record<string, unknown>;

function isObject(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(path: string, message: string): never {
  throw new EngineConfigError(`MODEL_ENGINES${path} ${message}`);
}

function checkKeys(raw: Raw, path: string, allowed: readonly string[]): void {
  for (const key of Object.keys(raw)) {
    if (!allowed.includes(key))
      fail(`${path}.${key}`, `is not a known setting (known: ${allowed.join(', ')})`);
  }
}

function positiveInt(raw: Raw, key: string, path: string, min = 1, max = 86_400_000): number | undefined {
  const value = raw[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(`${path}.${key}`, `must be an integer from ${min} to ${max}, not ${JSON.stringify(value)}`);
  }
  return value;
}

function string(raw: Raw, key: string, path: string): string | undefined {
  const value = raw[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') fail(`${path}.${key}`, 'must be a non-empty string');
  return value;
}

function stringMap(raw: Raw, key: string, path: string): Record<string, string> | undefined {
  const value = raw[key];
  if (value === undefined) return undefined;
  if (!isObject(value) || !Object.values(value).every((v) => typeof v === 'string' && v !== '')) {
    fail(`${path}.${key}`, 'must be an object of non-empty strings');
  }
  return value as Record<string, string>;
}

const UPSTREAM_KEYS = [
  'type',
  'baseUrl',
  'apiKey',
  'apiKeyEnv',
  'model',
  'modelMap',
  'timeoutMs',
  'connectTimeoutMs',
  'firstByteTimeoutMs',
  'totalTimeoutMs',
  'retries',
  'retryBaseMs',
  'maxRetryWaitMs',
  'headers',
  'fallback',
];

function parseUpstream(raw: Raw, path: string, env: NodeJS.ProcessEnv, depth: number): UpstreamEngineConfig {
  checkKeys(raw, path, UPSTREAM_KEYS);
  const baseUrl =
    string(raw, 'baseUrl', path) ?? fail(`${path}.baseUrl`, 'is required for an upstream engine');
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    fail(`${path}.baseUrl`, `must be an http(s) URL, not ${JSON.stringify(baseUrl)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    fail(`${path}.baseUrl`, `must be an http(s) URL, not ${JSON.stringify(baseUrl)}`);
  }
  const config: UpstreamEngineConfig = { type: 'upstream', baseUrl };
  const apiKey = string(raw, 'apiKey', path);
  const apiKeyEnv = string(raw, 'apiKeyEnv', path);
  if (apiKey !== undefined && apiKeyEnv !== undefined) fail(path, 'takes apiKey or apiKeyEnv, not both');
  if (apiKeyEnv !== undefined) {
    const fromEnv = env[apiKeyEnv];
    if (fromEnv === undefined || fromEnv === '')
      fail(`${path}.apiKeyEnv`, `names ${apiKeyEnv}, which is not set`);
    config.apiKey = fromEnv;
  } else if (apiKey !== undefined) {
    config.apiKey = apiKey;
  }
  const model = string(raw, 'model', path);
  if (model !== undefined) config.model = model;
  const modelMap = stringMap(raw, 'modelMap', path);
  if (modelMap !== undefined) {
    for (const key of Object.keys(modelMap)) {
      if (!MODELS.includes(key as TextModelId) && !MEDIA_MODELS.includes(key as MediaModelId))
        fail(
          `${path}.modelMap.${key}`,
          'is not a model with an engine (king, queen, prince, imagine, voice)',
        );
    }
    config.modelMap = modelMap;
  }
  const headers = stringMap(raw, 'headers', path);
  if (headers !== undefined) config.headers = headers;
  const timeoutMs = positiveInt(raw, 'timeoutMs', path);
  const totalTimeoutMs = positiveInt(raw, 'totalTimeoutMs', path) ?? timeoutMs;
  if (raw.timeoutMs !== undefined && raw.totalTimeoutMs !== undefined) {
    fail(path, 'takes timeoutMs or totalTimeoutMs (the same setting), not both');
  }
  if (totalTimeoutMs !== undefined) config.totalTimeoutMs = totalTimeoutMs;
  const connectTimeoutMs = positiveInt(raw, 'connectTimeoutMs', path);
  if (connectTimeoutMs !== undefined) config.connectTimeoutMs = connectTimeoutMs;
  const firstByteTimeoutMs = positiveInt(raw, 'firstByteTimeoutMs', path);
  if (firstByteTimeoutMs !== undefined) config.firstByteTimeoutMs = firstByteTimeoutMs;
  const retries = positiveInt(raw, 'retries', path, 0, 10);
  if (retries !== undefined) config.retries = retries;
  const retryBaseMs = positiveInt(raw, 'retryBaseMs', path, 1, 60_000);
  if (retryBaseMs !== undefined) config.retryBaseMs = retryBaseMs;
  const maxRetryWaitMs = positiveInt(raw, 'maxRetryWaitMs', path, 0, 600_000);
  if (maxRetryWaitMs !== undefined) config.maxRetryWaitMs = maxRetryWaitMs;
  if (raw.fallback !== undefined) {
    if (depth >= 3) fail(`${path}.fallback`, 'nests too deep (at most 3 fallbacks)');
    if (!isObject(raw.fallback)) fail(`${path}.fallback`, 'must be an object');
    if (raw.fallback.type !== undefined && raw.fallback.type !== 'upstream') {
      fail(`${path}.fallback.type`, 'must be "upstream" (a fallback is always an upstream)');
    }
    config.fallback = parseUpstream(raw.fallback, `${path}.fallback`, env, depth + 1);
  }
  return config;
}

function parseEngine(raw: unknown, path: string, env: NodeJS.ProcessEnv): EngineConfig {
  if (!isObject(raw)) fail(path, 'must be an object with a "type"');
  if (raw.type === 'reference') {
    checkKeys(raw, path, ['type', 'latency']);
    const latency = raw.latency ?? 'none';
    if (latency !== 'none' && latency !== 'p50') fail(`${path}.latency`, 'must be "none" or "p50"');
    return { type: 'reference', latency };
  }
  if (raw.type === 'upstream') return parseUpstream(raw, path, env, 0);
  return fail(`${path}.type`, `must be "reference" or "upstream", not ${JSON.stringify(raw.type)}`);
}

/** Reads and validates MODEL_ENGINES; throws EngineConfigError naming the faulty field. */
export function loadEnginesConfig(env: NodeJS.ProcessEnv): EnginesConfig {
  const source = env.MODEL_ENGINES?.trim() ?? '';
  if (source === '') return { king: DEFAULT_ENGINE, queen: DEFAULT_ENGINE, prince: DEFAULT_ENGINE };
  let text = source;
  if (!source.startsWith('{')) {
    try {
      text = readFileSync(source, 'utf8');
    } catch (error) {
      throw new EngineConfigError(
        `MODEL_ENGINES is neither JSON nor a readable file: ${source} (${(error as Error).message})`,
      );
    }
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new EngineConfigError(`MODEL_ENGINES is not valid JSON: ${(error as Error).message}`);
  }
  if (!isObject(raw))
    fail('', 'must be a JSON object keyed by "default", "king", "queen", "prince", "imagine" or "voice"');
  checkKeys(raw, '', ['default', ...MODELS, ...MEDIA_MODELS]);
  const fallback = raw.default === undefined ? DEFAULT_ENGINE : parseEngine(raw.default, '.default', env);
  const config = {} as EnginesConfig;
  for (const model of MODELS) {
    config[model] = raw[model] === undefined ? fallback : parseEngine(raw[model], `.${model}`, env);
  }
  return config;
}

export type EngineSelector = ((model: TextModelId) => Engine) & {
  /** The engine of each model, for logs: `{ king: 'upstream:10.0.0.5:8000', queen: 'reference', … }`. */
  describe(): Record<TextModelId, string>;
  /** Releases the upstream engines' idle connections. */
  close(): void;
};

/**
 * Builds each engine of the configuration (MODEL_ENGINES, read by src/config.ts) once and returns
 * the selector. Upstreams are called through `door`, the outbound guard.
 */
export function createEngines(config: EnginesConfig, door: Outbound): EngineSelector {
  const built = new Map<EngineConfig, Engine>();
  const engines = {} as Record<TextModelId, Engine>;
  for (const model of MODELS) {
    const entry = config[model];
    let engine = built.get(entry);
    if (engine === undefined) {
      engine =
        entry.type === 'reference'
          ? new ReferenceEngine({ latency: entry.latency })
          : new UpstreamEngine(entry, door);
      built.set(entry, engine);
    }
    engines[model] = engine;
  }
  const select = (model: TextModelId): Engine => engines[model];
  return Object.assign(select, {
    describe: () => ({ king: engines.king.name, queen: engines.queen.name, prince: engines.prince.name }),
    close: () => {
      for (const engine of built.values()) if (engine instanceof UpstreamEngine) engine.close();
    },
  });
}

/** The engine of each media model (the built-in one unless MODEL_ENGINES names an upstream). */
export type MediaEnginesConfig = Record<MediaModelId, EngineConfig>;

/** Reads the `imagine` and `voice` entries of MODEL_ENGINES; throws EngineConfigError naming the faulty field. */
export function loadMediaEnginesConfig(env: NodeJS.ProcessEnv): MediaEnginesConfig {
  const config: MediaEnginesConfig = { imagine: DEFAULT_ENGINE, voice: DEFAULT_ENGINE };
  const source = env.MODEL_ENGINES?.trim() ?? '';
  if (source === '') return config;
  loadEnginesConfig(env); // the whole document's checks, with their messages
  const text = source.startsWith('{') ? source : readFileSync(source, 'utf8');
  const raw = JSON.parse(text) as Raw;
  for (const model of MEDIA_MODELS) {
    const entry = raw[model];
    if (entry === undefined) continue;
    const parsed = parseEngine(entry, `.${model}`, env);
    if (parsed.type === 'reference' && parsed.latency !== 'none') {
      fail(`.${model}.latency`, 'is for text models only');
    }
    config[model] = parsed;
  }
  return config;
}

export interface MediaEngines {
  image: ImageEngine;
  voice: VoiceEngine;
  describe(): Record<MediaModelId, string>;
  close(): void;
}

/** Builds the media engines of MODEL_ENGINES (the built-in voice engine finds its Debian tools on PATH). */
export function createMediaEngines(
  config: MediaEnginesConfig,
  door: Outbound,
  options: { recognizerModelDir?: string | undefined; imageWorkers?: number } = {},
): MediaEngines {
  const image =
    config.imagine.type === 'upstream'
      ? new UpstreamImageEngine(config.imagine, door)
      : new BuiltinImageEngine(options.imageWorkers);
  const voice =
    config.voice.type === 'upstream'
      ? new UpstreamVoiceEngine(config.voice, door)
      : new BuiltinVoiceEngine({ modelDir: options.recognizerModelDir });
  return {
    image,
    voice,
    describe: () => ({
      imagine: image.name,
      voice:
        voice.name === 'builtin'
          ? `builtin (speech: ${voice.speechAvailable ? 'espeak-ng' : 'not installed'}, recognition: ${voice.recognitionAvailable ? 'pocketsphinx' : 'not installed'})`
          : voice.name,
    }),
    close: () => {
      if (image instanceof UpstreamImageEngine) image.close();
      else void (image as BuiltinImageEngine).close();
      if (voice instanceof UpstreamVoiceEngine) voice.close();
    },
  };
}
