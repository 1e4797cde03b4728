import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SdkAccount, signUpForSdk } from './support/sdk.ts';
import { type RunningServer, startServer } from './support/server.ts';

/**
 * The official `openai` SDK pointed at {base}/v1 with a gate header, for every task type OpenAI's
 * API has besides chat: embeddings, images, speech, transcription, translation, moderation. Each
 * goes through a gate of its type on the mock provider, which makes real media: the SDK parses
 * every answer, and the bytes are checked to be what they claim. And an agent loop through an
 * agent gate, tied to one session by its header.
 */
describe('the openai SDK’s task endpoints against Gatehouse', () => {
  let server: RunningServer;
  let account: SdkAccount;

  const gateFor = async (taskType: string, model: string) =>
    account.openAI(await account.createGate({ name: `${taskType}-${crypto.randomUUID()}`, taskType, model }));

  beforeAll(async () => {
    server = await startServer({});
    account = await signUpForSdk(server.url, 'tasks');
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('embeds, decoding the SDK’s default base64 into unit vectors', async () => {
    const client = await gateFor('embeddings', 'mock/embed');
    // Without encoding_format the SDK asks for base64 and decodes it itself.
    const result = await client.embeddings.create({
      model: 'mock/embed',
      input: ['one', 'two'],
      dimensions: 32,
    });
    expect(result.object).toBe('list');
    expect(result.data).toHaveLength(2);
    for (const item of result.data) {
      expect(item.embedding).toHaveLength(32);
      expect(Math.hypot(...item.embedding)).toBeCloseTo(1, 5);
    }
    expect(result.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('generates an image as b64_json: a real PNG', async () => {
    const client = await gateFor('image', 'mock/image');
    const result = await client.images.generate({
      model: 'mock/image',
      prompt: 'a lighthouse at dusk',
      response_format: 'b64_json',
    });
    const png = Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64');
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  });

  it('speaks: the bytes are a WAV file', async () => {
    const client = await gateFor('tts', 'mock/tts');
    const speech = await client.audio.speech.create({
      model: 'mock/tts',
      input: 'Hello from Gatehouse',
      voice: 'alloy',
      response_format: 'wav',
    });
    const wav = Buffer.from(await speech.arrayBuffer());
    expect(wav.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(wav.subarray(8, 12).toString('ascii')).toBe('WAVE');
    expect(wav.length).toBeGreaterThan(1000);
  });

  it('transcribes and translates a real WAV uploaded as multipart', async () => {
    const tts = await gateFor('tts', 'mock/tts');
    const wav = Buffer.from(
      await (
        await tts.audio.speech.create({
          model: 'mock/tts',
          input: 'A sentence to hear',
          voice: 'alloy',
          response_format: 'wav',
        })
      ).arrayBuffer(),
    );
    const stt = await gateFor('stt', 'mock/stt');
    const transcript = await stt.audio.transcriptions.create({
      model: 'mock/stt',
      file: await toFile(wav, 'speech.wav', { type: 'audio/wav' }),
    });
    expect(typeof transcript.text).toBe('string');
    expect(transcript.text.length).toBeGreaterThan(0);

    const audio = await gateFor('audio', 'mock/stt');
    const translation = await audio.audio.translations.create({
      model: 'mock/stt',
      file: await toFile(wav, 'speech.wav', { type: 'audio/wav' }),
    });
    expect(typeof translation.text).toBe('string');
  });

  it('moderates, flagging what the mock’s keywords flag', async () => {
    const client = await gateFor('moderation', 'mock/moderation');
    const result = await client.moderations.create({
      model: 'mock/moderation',
      input: ['a calm sentence', 'I will kill it'],
    });
    expect(result.results).toHaveLength(2);
    expect(result.results[0]?.flagged).toBe(false);
    expect(result.results[1]?.flagged).toBe(true);
  });

  it('runs an agent loop on an agent gate under one session: tools recorded, each step inferred', async () => {
    const gateId = await account.createGate({ gateType: 'agent' });
    const client = account.openAI(gateId, { 'x-gatehouse-session-id': 'sdk-loop' });
    const tools: OpenAI.Chat.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      },
    ];
    const question: OpenAI.Chat.ChatCompletionMessageParam = {
      role: 'user',
      content: 'Weather in Oslo? [mock:tool=get_weather]',
    };
    const first = await client.chat.completions.create({ model: 'gate', messages: [question], tools });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');
    const second = await client.chat.completions.create({
      model: 'gate',
      tools,
      messages: [
        question,
        first.choices[0]?.message as OpenAI.Chat.ChatCompletionMessageParam,
        { role: 'tool', tool_call_id: call?.id ?? '', content: '12°C' },
      ],
    });
    expect(second.choices[0]?.finish_reason).toBe('stop');

    const auth = { authorization: `Bearer ${account.apiKey}` };
    const session = (await (
      await fetch(`${server.url}/v1/sessions/sdk-loop?gateId=${gateId}`, { headers: auth })
    ).json()) as {
      requestCount: number;
      toolsCalled: string[];
    };
    expect(session).toMatchObject({ requestCount: 2, toolsCalled: ['get_weather'] });
    // Log entries are written off the request path: wait for both.
    await expect
      .poll(async () => {
        const page = (await (
          await fetch(`${server.url}/v1/logs?sessionId=sdk-loop`, { headers: auth })
        ).json()) as {
          logs: { inferred_action: string | null }[];
        };
        return page.logs.map((l) => l.inferred_action).sort();
      })
      .toEqual(['get_weather', 'respond']);
  });

  it('refuses a gate of another type with the SDK’s BadRequestError', async () => {
    const client = await gateFor('embeddings', 'mock/embed');
    await expect(
      client.moderations.create({ model: 'mock/moderation', input: 'hello' }),
    ).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });
});
