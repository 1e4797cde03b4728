/**
 * The facts the Architect reads per catalog model: the catalog's prices and task types, published
 * capabilities (models.dev, OpenAI's specs) and leaderboard quality, and the mock models' local
 * figures, which tests of the Architect rely on. No database.
 */
import { describe, expect, it } from 'vitest';
import { findModel, listModels } from '../src/domain/catalog.ts';
import capabilityFile from '../src/domain/data/model-capabilities.json' with { type: 'json' };
import qualityFile from '../src/domain/data/model-quality.json' with { type: 'json' };
import { modelFact, modelFacts, QUALITY_DATA } from '../src/domain/modelFacts.ts';

function fact(id: string) {
  const found = modelFact(id);
  if (!found) throw new Error(`no facts for ${id}`);
  return found;
}

describe('model facts', () => {
  it('covers exactly the catalog, with its prices and task types', () => {
    const catalog = listModels();
    expect(modelFacts().map((f) => f.id)).toEqual(catalog.map((m) => m.id));
    const mini = fact('openai/gpt-4o-mini');
    const listed = findModel('openai/gpt-4o-mini');
    expect(mini).toMatchObject({
      provider: 'openai',
      taskTypes: ['chat'],
      inputPricePerMTok: listed?.inputPricePerMTok,
      outputPricePerMTok: listed?.outputPricePerMTok,
      contextWindow: listed?.contextWindow,
    });
    expect(mini.inputPricePerMTok).toBeGreaterThan(0);
  });

  it('knows a vision model takes images and calls tools, and its output limit', () => {
    const gpt4o = fact('openai/gpt-4o');
    expect(gpt4o.capabilities).toMatchObject({ vision: true, tools: true, structuredOutput: true });
    expect(gpt4o.maxOutputTokens).toBe(16_384);
    expect(gpt4o.sources.some((s) => s.startsWith('models.dev'))).toBe(true);
    expect(fact('anthropic/claude-sonnet-4-5').capabilities).toMatchObject({
      vision: true,
      tools: true,
      reasoning: true,
    });
    expect(fact('openai/gpt-3.5-turbo').capabilities.vision).toBe(false);
  });

  it('fills OpenAI models models.dev lacks from OpenAI specs', () => {
    const luna = fact('openai/gpt-5.6-luna');
    expect(capabilityFile.models).not.toHaveProperty('openai/gpt-5.6-luna');
    expect(luna.capabilities).toMatchObject({
      tools: true,
      structuredOutput: true,
      vision: true,
      reasoning: true,
    });
    expect(luna.sources).toContain('gpt-tokenizer (OpenAI model specs)');
  });

  it('gives an embeddings model no chat task', () => {
    for (const id of ['openai/text-embedding-3-small', 'mock/embed']) {
      expect(fact(id).taskTypes).toContain('embeddings');
      expect(fact(id).taskTypes).not.toContain('chat');
    }
  });

  it('scores quality 0–100 per kind from the leaderboard, better models higher', () => {
    const scored = modelFacts().filter((f) => f.provider !== 'mock' && f.quality.general !== null);
    expect(scored.length).toBe(Object.keys(qualityFile.models).length);
    for (const kind of ['general', 'code', 'reasoning'] as const) {
      const values = scored.map((f) => f.quality[kind]).filter((v) => v !== null);
      expect(Math.min(...values)).toBe(0);
      expect(Math.max(...values)).toBe(100);
    }
    const opus = fact('anthropic/claude-opus-4-5').quality;
    const haiku = fact('anthropic/claude-3-haiku').quality;
    expect(opus.general).toBeGreaterThan(haiku.general ?? 100);
    expect(opus.code).toBeGreaterThan(haiku.code ?? 100);
    expect(fact('openai/gpt-4o').sources).toContain(`LMArena ${QUALITY_DATA.dataAsOf}`);
    expect(fact('openai/text-embedding-3-small').quality).toEqual({
      general: null,
      code: null,
      reasoning: null,
    });
  });

  it('names the quality source and its dates, and every model it rates is a catalog model', () => {
    expect(QUALITY_DATA.source).toMatch(/LMArena/);
    expect(QUALITY_DATA.url).toMatch(/^https:\/\//);
    expect(QUALITY_DATA.retrievedAt).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(QUALITY_DATA.dataAsOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const catalog = new Set(listModels().map((m) => m.id));
    expect(Object.keys(qualityFile.models).filter((id) => !catalog.has(id))).toEqual([]);
    expect(capabilityFile.source).toBe('models.dev');
    expect(Object.keys(capabilityFile.models).filter((id) => !catalog.has(id))).toEqual([]);
  });

  it('tells the mock models apart: fast is cheaper and quicker, smart better at every kind', () => {
    const fast = fact('mock/fast');
    const smart = fact('mock/smart');
    for (const mock of [fast, smart]) {
      expect(mock.taskTypes).toContain('chat');
      expect(mock.capabilities).toMatchObject({ tools: true, structuredOutput: true });
      expect(mock.sources).toContain('local test figures');
    }
    expect(fast.inputPricePerMTok).toBeLessThan(smart.inputPricePerMTok ?? 0);
    expect(fast.outputPricePerMTok).toBeLessThan(smart.outputPricePerMTok ?? 0);
    expect(fast.typicalLatencyMs).toBeLessThan(smart.typicalLatencyMs ?? 0);
    for (const kind of ['general', 'code', 'reasoning'] as const) {
      expect(fast.quality[kind]).toBeLessThan(smart.quality[kind] ?? 0);
    }
  });

  it('has no facts for a model outside the catalog', () => {
    expect(modelFact('openai/no-such-model')).toBeUndefined();
  });
});
