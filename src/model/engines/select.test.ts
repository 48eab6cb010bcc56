import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { outbound } from '../../platform/outbound.ts';
import { EngineConfigError, createEngines, loadEnginesConfig } from './select.ts';
import { ReferenceEngine } from './reference.ts';
import { UpstreamEngine } from './upstream.ts';

const door = outbound({ allowPrivate: false });
afterAll(() => door.close());

describe('engine configuration', () => {
  it('defaults to the reference engine for king, queen and prince', () => {
    const engines = createEngines(loadEnginesConfig({}), door);
    for (const model of ['king', 'queen', 'prince'] as const)
      expect(engines(model)).toBeInstanceOf(ReferenceEngine);
    expect(engines.describe()).toEqual({ king: 'reference', queen: 'reference', prince: 'reference' });
    expect(engines('king')).toBe(engines('queen'));
  });

  it('reads JSON from the variable, with a default and per-model upstreams and fallbacks', () => {
    const engines = createEngines(
      loadEnginesConfig({
        UP_KEY: 'sk-env',
        MODEL_ENGINES: JSON.stringify({
          default: { type: 'reference', latency: 'p50' },
          king: {
            type: 'upstream',
            baseUrl: 'http://127.0.0.1:9000/v1',
            apiKeyEnv: 'UP_KEY',
            model: 'llama3',
            timeoutMs: 60000,
            retries: 1,
            fallback: { baseUrl: 'https://backup.example.eu/v1', apiKey: 'sk-b', modelMap: { king: 'big' } },
          },
        }),
      }),
      door,
    );
    const king = engines('king');
    expect(king).toBeInstanceOf(UpstreamEngine);
    expect((king as UpstreamEngine).config).toMatchObject({
      baseUrl: 'http://127.0.0.1:9000/v1',
      apiKey: 'sk-env',
      model: 'llama3',
      totalTimeoutMs: 60000,
      retries: 1,
      fallback: { baseUrl: 'https://backup.example.eu/v1', apiKey: 'sk-b', modelMap: { king: 'big' } },
    });
    expect((engines('queen') as ReferenceEngine).latency).toBe('p50');
    expect(engines.describe().king).toBe('upstream:127.0.0.1:9000');
    engines.close();
  });

  it('reads a JSON file when given a path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'engines-'));
    const file = join(dir, 'engines.json');
    writeFileSync(file, JSON.stringify({ prince: { type: 'upstream', baseUrl: 'http://10.0.0.5:8000/v1' } }));
    const config = loadEnginesConfig({ MODEL_ENGINES: file });
    expect(config.prince).toEqual({ type: 'upstream', baseUrl: 'http://10.0.0.5:8000/v1' });
    expect(config.king).toEqual({ type: 'reference', latency: 'none' });
  });

  it.each([
    ['{not json', /not valid JSON/],
    ['/no/such/file.json', /neither JSON nor a readable file/],
    ['{"emperor": {"type": "reference"}}', /MODEL_ENGINES\.emperor is not a known setting/],
    ['{"king": {"type": "magic"}}', /MODEL_ENGINES\.king\.type must be "reference" or "upstream"/],
    ['{"king": {"type": "upstream"}}', /MODEL_ENGINES\.king\.baseUrl is required/],
    ['{"king": {"type": "upstream", "baseUrl": "ftp://x"}}', /king\.baseUrl must be an http\(s\) URL/],
    [
      '{"king": {"type": "upstream", "baseUrl": "http://x", "retries": -1}}',
      /king\.retries must be an integer/,
    ],
    [
      '{"king": {"type": "upstream", "baseUrl": "http://x", "timeoutMs": "60"}}',
      /king\.timeoutMs must be an integer/,
    ],
    [
      '{"king": {"type": "upstream", "baseUrl": "http://x", "apiKeyEnv": "NOPE"}}',
      /apiKeyEnv names NOPE, which is not set/,
    ],
    [
      '{"king": {"type": "upstream", "baseUrl": "http://x", "fallback": {"baseUrl": 3}}}',
      /king\.fallback\.baseUrl must be/,
    ],
    ['{"queen": {"type": "reference", "latency": "p99"}}', /queen\.latency must be "none" or "p50"/],
    [
      '{"queen": {"type": "upstream", "baseUrl": "http://x", "modelMap": {"gpt": "y"}}}',
      /modelMap\.gpt is not a model with an engine/,
    ],
    [
      '{"queen": {"type": "upstream", "baseUrl": "http://x", "retrys": 2}}',
      /queen\.retrys is not a known setting/,
    ],
  ])('rejects %s with a clear error', (value, message) => {
    expect(() => createEngines(loadEnginesConfig({ MODEL_ENGINES: value }), door)).toThrow(EngineConfigError);
    expect(() => createEngines(loadEnginesConfig({ MODEL_ENGINES: value }), door)).toThrow(message);
  });
});
