import { calcPrice } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { costOf } from '../src/dataplane/cost.ts';
import { findModel } from '../src/domain/catalog.ts';

// genai-prices' own calculator is the reference: the catalog takes its prices from that package,
// and its calcPrice knows each provider's rules for cached and cache-writing input.
function reference(model: string, usage: Record<string, number>) {
  const [provider, providerModel] = model.split('/') as [string, string];
  const price = calcPrice(usage, providerModel, { providerId: provider });
  if (!price) throw new Error(`genai-prices does not know ${model}`);
  return price.total_price;
}

describe('cost of a request', () => {
  it('charges Anthropic cache writes above input and cache reads below it, as Anthropic bills them', () => {
    const model = 'anthropic/claude-sonnet-4-5';
    expect(findModel(model)?.cacheWriteInputPricePerMTok).toBeGreaterThan(
      findModel(model)?.inputPricePerMTok ?? Number.POSITIVE_INFINITY,
    );
    const cost = costOf(model, {
      promptTokens: 3000,
      cacheWriteTokens: 1000,
      cachedTokens: 1500,
      completionTokens: 200,
    });
    expect(cost).toBeCloseTo(
      reference(model, {
        input_tokens: 3000,
        cache_write_tokens: 1000,
        cache_read_tokens: 1500,
        output_tokens: 200,
      }),
      12,
    );
  });

  it('charges OpenAI cached input at its cached price', () => {
    const model = 'openai/gpt-4o-mini';
    const cost = costOf(model, { promptTokens: 1200, cachedTokens: 1024, completionTokens: 40 });
    expect(cost).toBeCloseTo(
      reference(model, { input_tokens: 1200, cache_read_tokens: 1024, output_tokens: 40 }),
      12,
    );
  });
});
