import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SdkAccount, signUpForSdk } from './support/sdk.ts';
import { type RunningServer, startServer } from './support/server.ts';

/**
 * The Vercel AI SDK and LangChain, configured as docs/api.md shows: the OpenAI provider of each
 * pointed at {base}/v1 with the API key, the gate named as the model (`gatehouse/<gate>`), so no
 * custom header is needed.
 */
describe('application frameworks against Gatehouse', () => {
  let server: RunningServer;
  let account: SdkAccount;

  beforeAll(async () => {
    server = await startServer();
    account = await signUpForSdk(server.url, 'frameworks');
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('the Vercel AI SDK answers through chat completions and the Responses API, streamed and not', async () => {
    const gateId = await account.createGate({ systemPrompt: 'Be brief.' });
    const gatehouse = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: account.apiKey });

    const chat = await generateText({
      model: gatehouse.chat(`gatehouse/${gateId}`),
      prompt: 'hello from ai',
    });
    expect(chat.text).toBe('Echo: hello from ai');
    expect(chat.usage.inputTokens).toBeGreaterThan(0);

    const responses = await generateText({ model: gatehouse(`gatehouse/${gateId}`), prompt: 'hello again' });
    expect(responses.text).toBe('Echo: hello again');

    const streamed = streamText({ model: gatehouse.chat(`gatehouse/${gateId}`), prompt: 'stream me' });
    let text = '';
    for await (const part of streamed.textStream) text += part;
    expect(text).toBe('Echo: stream me');
  });

  it('LangChain’s ChatOpenAI answers, streamed and not', async () => {
    const gateId = await account.createGate({});
    const model = new ChatOpenAI({
      model: `gatehouse/${gateId}`,
      apiKey: account.apiKey,
      configuration: { baseURL: `${server.url}/v1` },
      maxRetries: 0,
    });
    const message = await model.invoke('hello from langchain');
    expect(message.content).toBe('Echo: hello from langchain');
    expect(message.usage_metadata?.total_tokens).toBeGreaterThan(0);

    let text = '';
    for await (const chunk of await model.stream('stream from langchain')) text += String(chunk.content);
    expect(text).toBe('Echo: stream from langchain');
  });
});
