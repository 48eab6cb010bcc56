import { describe, expect, it } from 'vitest';
import {
  CATALOGUE,
  KING,
  PRINCE,
  QUEEN,
  costNano,
  dimensionCostNano,
  getModel,
  listModelObjects,
  toModelObject,
} from './catalogue.ts';
import { specErrors } from './testing/spec.ts';

describe('catalogue', () => {
  it('holds the seven models of the seed, in its order', () => {
    expect(CATALOGUE.map((m) => m.id)).toEqual([
      'king',
      'queen',
      'prince',
      'voice',
      'imagine',
      'agents',
      'mcp',
    ]);
    expect([KING.contextWindow, QUEEN.contextWindow, PRINCE.contextWindow]).toEqual([
      200_000, 64_000, 16_000,
    ]);
    expect(CATALOGUE.map((m) => m.latencyP50Ms)).toEqual([180, 90, 35, 120, 1100, null, null]);
  });

  it('keeps prices as integer nano-EUR', () => {
    expect([KING.inputNanoPerToken, KING.outputNanoPerToken]).toEqual([3000, 12000]);
    expect([QUEEN.inputNanoPerToken, QUEEN.outputNanoPerToken]).toEqual([500, 2000]);
    expect([PRINCE.inputNanoPerToken, PRINCE.outputNanoPerToken]).toEqual([50, 200]);
    expect(getModel('imagine')?.prices[0]?.nanoPerUnit).toBe(8_000_000);
    expect(getModel('agents')?.prices[0]?.nanoPerUnit).toBe(40_000_000);
    expect(getModel('voice')?.prices[0]?.nanoPerUnit).toBe(6_000_000_000);
    expect(getModel('gpt-4')).toBeUndefined();
  });

  it('renders every model as the spec Model, prices as Money strings', () => {
    for (const model of listModelObjects()) expect(specErrors('Model', model)).toBe('');
    expect(
      specErrors('ModelList', {
        object: 'list',
        data: listModelObjects(),
        has_more: false,
        next_cursor: null,
      }),
    ).toBe('');
    const king = toModelObject(KING);
    expect(king.pricing.prices.map((p) => p.price)).toEqual(['3.000000000', '12.000000000']);
    expect(toModelObject(PRINCE).pricing.prices.map((p) => p.price)).toEqual(['0.050000000', '0.200000000']);
    expect(listModelObjects()[4]?.pricing.prices[0]?.price).toBe('0.008000000');
  });

  it('says what serves each model here: the reference engine is named as no language model', () => {
    const builtIn = listModelObjects({
      king: 'reference',
      queen: 'reference',
      prince: 'reference',
      imagine: 'builtin',
    });
    expect(builtIn[1]?.description).toBe(
      'The default for chat, routing and tools. Here the built-in reference engine: text made by rule for tests and demos, repeatable with `seed`; not a language model (MODEL_ENGINES puts it on a real one).',
    );
    expect(builtIn[4]?.description).toMatch(/not a diffusion model/);
    const upstream = toModelObject(QUEEN, { queen: 'upstream:127.0.0.1:11434' });
    expect(upstream.description).toBe(
      'The default for chat, routing and tools. Here served by an OpenAI-compatible upstream model.',
    );
    expect(upstream.description).not.toMatch(/11434/); // the operator's address stays private
  });

  it('computes costs exactly, as in the spec examples', () => {
    expect(costNano('queen', 24, 8)).toBe(28_000);
    expect(costNano(QUEEN, 82, 18)).toBe(77_000);
    expect(costNano('king', 200_000, 0)).toBe(600_000_000);
    expect(costNano('prince', 1, 1)).toBe(250);
    expect(costNano('king', 0, 0)).toBe(0);
  });

  it('rounds pro-rata prices half up to a whole nano-EUR', () => {
    const voice = getModel('voice');
    if (voice === undefined) throw new Error('voice missing');
    // 6 EUR per hour: one second is 1,666,666.67 nano-EUR
    expect(dimensionCostNano(voice, 'audio_seconds', 1)).toBe(1_666_667);
    expect(dimensionCostNano(voice, 'audio_seconds', 3600)).toBe(6_000_000_000);
    expect(dimensionCostNano(voice, 'audio_seconds', 2)).toBe(3_333_333);
    expect(() => dimensionCostNano(voice, 'audio_seconds', -1)).toThrow(RangeError);
  });
});
