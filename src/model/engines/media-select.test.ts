import { afterAll, describe, expect, it } from 'vitest';
import { outbound } from '../../platform/outbound.ts';
import { BuiltinImageEngine, BuiltinVoiceEngine } from '../../media/engines.ts';
import { UpstreamImageEngine, UpstreamVoiceEngine, utterancesOf } from './media-upstream.ts';
import {
  createMediaEngines,
  EngineConfigError,
  loadEnginesConfig,
  loadMediaEnginesConfig,
} from './select.ts';

const door = outbound({ allowPrivate: false });
afterAll(() => door.close());

describe('media engine configuration', () => {
  it('puts imagine and voice on the built-in engines by default, and `default` sets text models only', () => {
    const env = {
      MODEL_ENGINES: JSON.stringify({ default: { type: 'upstream', baseUrl: 'http://127.0.0.1:9/v1' } }),
    };
    const media = createMediaEngines(loadMediaEnginesConfig(env), door);
    expect(media.image).toBeInstanceOf(BuiltinImageEngine);
    expect(media.voice).toBeInstanceOf(BuiltinVoiceEngine);
    media.close();
    expect(loadEnginesConfig(env).queen.type).toBe('upstream');
  });

  it('puts each media model on its own upstream, with failover', () => {
    const media = createMediaEngines(
      loadMediaEnginesConfig({
        MODEL_ENGINES: JSON.stringify({
          imagine: { type: 'upstream', baseUrl: 'http://10.0.0.5:8000/v1', modelMap: { imagine: 'sdxl' } },
          voice: {
            type: 'upstream',
            baseUrl: 'http://10.0.0.6:8000/v1',
            fallback: { baseUrl: 'http://10.0.0.7:8000/v1' },
          },
        }),
      }),
      door,
    );
    expect(media.image).toBeInstanceOf(UpstreamImageEngine);
    expect(media.voice).toBeInstanceOf(UpstreamVoiceEngine);
    expect(media.describe()).toEqual({ imagine: 'upstream:10.0.0.5:8000', voice: 'upstream:10.0.0.6:8000' });
    media.close();
  });

  it('names the faulty field', () => {
    const bad = (config: object) => () => loadMediaEnginesConfig({ MODEL_ENGINES: JSON.stringify(config) });
    expect(bad({ voice: { type: 'upstream' } })).toThrow(
      new EngineConfigError('MODEL_ENGINES.voice.baseUrl is required for an upstream engine'),
    );
    expect(bad({ imagine: { type: 'reference', latency: 'p50' } })).toThrow(
      /MODEL_ENGINES.imagine.latency is for text models only/,
    );
    expect(bad({ imagine: { type: 'upstream', baseUrl: 'http://a/v1', modelMap: { dalle: 'x' } } })).toThrow(
      /modelMap.dalle/,
    );
  });
});

describe('an upstream’s verbose_json as utterances', () => {
  it('groups the words into their segments', () => {
    const utterances = utterancesOf(
      {
        text: 'Hello there. General Kenobi.',
        segments: [
          { start: 0, end: 1.2, text: ' Hello there.' },
          { start: 1.5, end: 3, text: ' General Kenobi.' },
        ],
        words: [
          { word: 'Hello', start: 0.1, end: 0.5 },
          { word: 'there', start: 0.6, end: 1.1 },
          { word: 'General', start: 1.5, end: 2.1 },
          { word: 'Kenobi', start: 2.2, end: 2.9 },
        ],
      },
      3,
    );
    expect(utterances.map((u) => [u.text, u.words.map((w) => w.word)])).toEqual([
      ['Hello there.', ['Hello', 'there']],
      ['General Kenobi.', ['General', 'Kenobi']],
    ]);
    expect(utterancesOf({ text: 'Just text.' }, 2)).toEqual([
      {
        text: 'Just text.',
        start: 0,
        end: 2,
        words: [
          { word: 'Just', start: 0, end: 2, confidence: 1 },
          { word: 'text.', start: 0, end: 2, confidence: 1 },
        ],
      },
    ]);
  });
});
