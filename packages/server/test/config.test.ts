import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { PROVIDERS } from '../src/providers/descriptors.ts';

describe('provider settings at start-up', () => {
  it('refuses a malformed base URL, naming the variable, before any request', () => {
    expect(() => loadConfig({ OPENAI_BASE_URL: 'api.openai.com/v1' })).toThrow(
      /OPENAI_BASE_URL: must be an http:\/\/ or https:\/\/ URL/,
    );
    expect(() => loadConfig({ OLLAMA_BASE_URL: 'ftp://127.0.0.1:11434' })).toThrow(/OLLAMA_BASE_URL/);
  });

  it('configures a provider by its key, a self-hosted one by its URL, and the mock always', () => {
    const { providers } = loadConfig({
      ANTHROPIC_API_KEY: 'sk-ant-x',
      VLLM_BASE_URL: 'http://127.0.0.1:8000/v1',
    });
    expect(providers.providers.anthropic).toEqual({
      configured: true,
      apiKey: 'sk-ant-x',
      baseUrl: 'https://api.anthropic.com',
    });
    expect(providers.providers.vllm?.configured).toBe(true);
    expect(providers.providers.ollama?.configured).toBe(false);
    expect(providers.providers.openai?.configured).toBe(false);
    expect(providers.providers.mock?.configured).toBe(true);
  });

  it('reads an empty variable as unset', () => {
    const { providers } = loadConfig({ OPENAI_API_KEY: '', OPENAI_BASE_URL: '' });
    expect(providers.providers.openai).toEqual({
      configured: false,
      apiKey: undefined,
      baseUrl: 'https://api.openai.com/v1',
    });
  });

  it('knows every provider by one descriptor', () => {
    const ids = PROVIDERS.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['openai', 'anthropic', 'gemini', 'mistral', 'mock']));
  });
});

describe('the Architect’s settings', () => {
  it('take 0 (no scheduled re-analysis in this process) or an interval from 1 s to a day', () => {
    expect(loadConfig({}).architect).toEqual({ model: undefined, intervalMs: 60_000 });
    expect(loadConfig({ GATEHOUSE_ARCHITECT_INTERVAL_MS: '0' }).architect.intervalMs).toBe(0);
    expect(() => loadConfig({ GATEHOUSE_ARCHITECT_INTERVAL_MS: '500' })).toThrow(
      /GATEHOUSE_ARCHITECT_INTERVAL_MS: must be 0 \(off\) or 1000 to 86400000/,
    );
  });
});

describe('PostgreSQL’s prepared statements', () => {
  it('are on unless GATEHOUSE_PG_PREPARE is 0 or false', () => {
    expect(loadConfig({}).preparedStatements).toBe(true);
    expect(loadConfig({ GATEHOUSE_PG_PREPARE: '' }).preparedStatements).toBe(true);
    expect(loadConfig({ GATEHOUSE_PG_PREPARE: '0' }).preparedStatements).toBe(false);
    expect(loadConfig({ GATEHOUSE_PG_PREPARE: 'false' }).preparedStatements).toBe(false);
    expect(() => loadConfig({ GATEHOUSE_PG_PREPARE: 'maybe' })).toThrow(/GATEHOUSE_PG_PREPARE/);
  });
});

describe('WebAssembly', () => {
  it('is optimised where it runs hot unless GATEHOUSE_OPTIMIZE_WASM is 0 or false', () => {
    expect(loadConfig({}).optimizeWasm).toBe(true);
    expect(loadConfig({ GATEHOUSE_OPTIMIZE_WASM: '0' }).optimizeWasm).toBe(false);
    expect(() => loadConfig({ GATEHOUSE_OPTIMIZE_WASM: 'no' })).toThrow(/GATEHOUSE_OPTIMIZE_WASM/);
  });
});
