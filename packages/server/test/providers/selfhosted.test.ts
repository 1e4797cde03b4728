/**
 * Self-hosted OpenAI-compatible servers (vLLM here, Ollama alike): any model name the operator
 * serves is a valid gate model once the server's base URL is configured.
 */
import { afterAll, expect, it } from 'vitest';
import { useTestApp } from '../support/app.ts';
import { answerOf, chat, say } from '../support/chat.ts';
import { completion, startOpenAIEmulator } from '../support/emulators/openai.ts';
import { createGate, gateInput, signUpUser } from '../support/factories.ts';

const emulator = await startOpenAIEmulator('groq', 'vllm-secret');
const app = useTestApp({ VLLM_BASE_URL: emulator.baseUrl, VLLM_API_KEY: 'vllm-secret' });
afterAll(() => emulator.upstream.close());

it('routes a gate on vllm/<any served model> to the configured server, free of charge', async () => {
  const user = await signUpUser(app);
  const gate = await createGate(app, user, { model: 'vllm/meta-llama/Llama-3.1-8B-Instruct' });
  emulator.upstream.reply({
    type: 'json',
    body: completion('groq', { content: 'Hi from vLLM', model: 'meta-llama/Llama-3.1-8B-Instruct' }),
  });

  const answer = await answerOf(await chat(app, user, gate.id, { messages: say('Hello') }));

  expect(answer).toMatchObject({
    content: 'Hi from vLLM',
    model: 'vllm/meta-llama/Llama-3.1-8B-Instruct',
    costUsd: 0,
  });
  expect(emulator.upstream.last().body).toMatchObject({ model: 'meta-llama/Llama-3.1-8B-Instruct' });
});

it('refuses a self-hosted model name that no server could serve', async () => {
  const user = await signUpUser(app);
  const res = await app.request('/v1/gates', {
    method: 'POST',
    headers: user.auth,
    json: gateInput({ model: 'vllm/not a name!' }),
  });
  expect(res.status).toBe(400);
  expect(await res.json()).toMatchObject({ error: { details: { issues: [{ path: 'model' }] } } });
});
