import type { TaskType } from '@gatehouse/rules/gate';

/** A request body's `data` for each task type, at the native `/v3/<type>` route. */
const SAMPLE_DATA: Record<Exclude<TaskType, 'stt' | 'audio'>, unknown> = {
  chat: { messages: [{ role: 'user', content: 'Hello!' }] },
  embeddings: { input: 'Hello!' },
  moderation: { input: 'Hello!' },
  tts: { input: 'Hello!' },
  image: { prompt: 'A lighthouse at dusk' },
  video: { prompt: 'A lighthouse at dusk' },
  ocr: { documentUrl: 'https://example.com/document.pdf' },
};

/** A curl command that calls the gate at this server (`origin`), with its id filled in. */
export function gateCurl(origin: string, gate: { id: string; taskType: TaskType }): string {
  const head = [
    `curl ${origin}/v3/${gate.taskType} \\`,
    `  -H "Authorization: Bearer $GATEHOUSE_API_KEY" \\`,
  ];
  if (gate.taskType === 'stt' || gate.taskType === 'audio') {
    return [...head, `  -F gateId=${gate.id} \\`, '  -F file=@recording.wav'].join('\n');
  }
  const body = JSON.stringify({ gateId: gate.id, data: SAMPLE_DATA[gate.taskType] });
  return [...head, `  -H "Content-Type: application/json" \\`, `  -d '${body}'`].join('\n');
}

/** The same through the OpenAI SDK, for the task types it has a call for here; null for the rest. */
export function gateOpenAISnippet(origin: string, gate: { id: string; taskType: TaskType }): string | null {
  const call =
    gate.taskType === 'chat'
      ? [
          'const answer = await client.chat.completions.create({',
          `  model: '${gate.id}', // the gate's id picks the gate`,
          "  messages: [{ role: 'user', content: 'Hello!' }],",
          '});',
          'console.log(answer.choices[0].message.content);',
        ]
      : gate.taskType === 'embeddings'
        ? [
            'const answer = await client.embeddings.create({',
            `  model: '${gate.id}', // the gate's id picks the gate`,
            "  input: 'Hello!',",
            '});',
            'console.log(answer.data[0].embedding.length);',
          ]
        : null;
  if (!call) return null;
  return [
    "import OpenAI from 'openai';",
    '',
    'const client = new OpenAI({',
    `  baseURL: '${origin}/v1',`,
    '  apiKey: process.env.GATEHOUSE_API_KEY,',
    '});',
    ...call,
  ].join('\n');
}
