/**
 * GATEHOUSE_ARCHITECT_MODEL: the description is read by a model through the gateway's own data
 * plane, with a JSON schema, logged and costed under the caller; a bad setting stops the start.
 */
import type { TaskAnalysis } from '@gatehouse/rules/architect';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { listLogs } from '../src/domain/logs.ts';
import { createRuntime } from '../src/runtime.ts';
import { useTestApp } from './support/app.ts';
import { signUpUser } from './support/factories.ts';

const app = useTestApp({ GATEHOUSE_ARCHITECT_MODEL: 'mock/smart' });

describe('the Architect’s model', () => {
  it('reads the description with a JSON schema, and the request is logged and costed under the caller', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/gates/suggestions', {
      method: 'POST',
      headers: user.auth,
      json: { description: 'Help engineers debug TypeScript', availableProviders: ['mock'] },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const { taskAnalysis, enhancedDescription } = (await res.json()) as {
      taskAnalysis: TaskAnalysis;
      enhancedDescription: string;
    };
    expect(taskAnalysis.readBy).toBe('model');
    // The mock answers a JSON schema with its first choices: chat, the first subtype, tools.
    expect(taskAnalysis.taskType).toBe('chat');
    expect(taskAnalysis.requiredCapabilities).toEqual(['tools']);
    expect(enhancedDescription).toBe('mock');
    await app.runtime.logs.drain();
    const { items } = await listLogs(user.id, {});
    expect(items).toHaveLength(1);
    const entry = items[0] as {
      gateName: string;
      gateId: string | null;
      modelUsed: string;
      costUsd: unknown;
      endpoint: string;
    };
    expect(entry).toMatchObject({
      gateName: 'Gatehouse Architect',
      gateId: null,
      modelUsed: 'mock/smart',
      endpoint: 'architect',
    });
    expect(Number(entry.costUsd)).toBeGreaterThan(0);
  });

  it('enhances a description saved with autoEnhanceDescription through the same model', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/gates', {
      method: 'POST',
      headers: user.auth,
      json: {
        name: 'Docs',
        model: 'mock/echo',
        taskType: 'chat',
        description: 'docs q&a',
        autoEnhanceDescription: true,
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    // The mock's reading answers its JSON schema with "mock" for the text.
    expect(((await res.json()) as { description: string }).description).toBe('mock');
  });

  it('falls back to the rules, and says why, when the model’s answer is not usable', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/gates/suggestions', {
      method: 'POST',
      headers: user.auth,
      json: { description: '[mock:fail=500] embeddings for semantic search', availableProviders: ['mock'] },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const { taskAnalysis } = (await res.json()) as { taskAnalysis: TaskAnalysis };
    expect(taskAnalysis.readBy).toBe('rules');
    expect(taskAnalysis.taskType).toBe('embeddings');
    expect(taskAnalysis.reasoning).toMatch(
      /mock\/smart could not read the description \(.+\); the rules read it/,
    );
  });

  it('stops the start when it names no configured chat model', () => {
    for (const [name, message] of [
      ['mock/nope', /GATEHOUSE_ARCHITECT_MODEL: /],
      ['mock/embed', /GATEHOUSE_ARCHITECT_MODEL: .*chat/],
      [
        'openai/gpt-4o-mini',
        /GATEHOUSE_ARCHITECT_MODEL: openai\/gpt-4o-mini is served by a provider that is not configured/,
      ],
    ] as const) {
      const config = loadConfig({ NODE_ENV: 'test', GATEHOUSE_ARCHITECT_MODEL: name, OPENAI_API_KEY: '' });
      expect(() => createRuntime(config), name).toThrow(message);
    }
  });
});
