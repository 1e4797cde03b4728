/**
 * A Claude Code session as it reaches /v1/messages, recorded in shape from the CLI (1.0.x) and
 * trimmed: the start-up quota probe, then three streamed turns of one task. Every turn carries
 * the CLI's headers (betas included), its two cached system blocks, its tools with their JSON
 * schemas (the last one marked for the cache), and thinking; the conversation grows by an
 * assistant turn (thinking with its signature, text, tool_use) and the user's tool_result blocks.
 */

const SCHEMA = 'http://json-schema.org/draft-07/schema#';

function tool(name: string, description: string, properties: Record<string, unknown>, required: string[]) {
  return {
    name,
    description,
    input_schema: { type: 'object', properties, required, additionalProperties: false, $schema: SCHEMA },
  };
}

const str = (description: string) => ({ type: 'string', description });
const num = (description: string) => ({ type: 'number', description });

export const CLAUDE_CODE_TOOLS = [
  tool(
    'Task',
    'Launch a new agent to handle complex, multi-step tasks autonomously.',
    {
      description: str('A short (3-5 word) description of the task'),
      prompt: str('The task for the agent to perform'),
      subagent_type: str('The type of specialized agent to use for this task'),
    },
    ['description', 'prompt', 'subagent_type'],
  ),
  tool(
    'Bash',
    'Executes a given bash command in a persistent shell session with optional timeout.',
    {
      command: str('The command to execute'),
      timeout: num('Optional timeout in milliseconds (max 600000)'),
      description: str('Clear, concise description of what this command does in 5-10 words.'),
      run_in_background: {
        type: 'boolean',
        description: 'Set to true to run this command in the background.',
      },
    },
    ['command'],
  ),
  tool(
    'Glob',
    'Fast file pattern matching tool that works with any codebase size.',
    { pattern: str('The glob pattern to match files against'), path: str('The directory to search in.') },
    ['pattern'],
  ),
  tool(
    'Grep',
    'A powerful search tool built on ripgrep.',
    {
      pattern: str('The regular expression pattern to search for in file contents'),
      path: str('File or directory to search in (rg PATH).'),
      glob: str('Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}")'),
      output_mode: { type: 'string', enum: ['content', 'files_with_matches', 'count'] },
      '-n': { type: 'boolean', description: 'Show line numbers in output (rg -n).' },
    },
    ['pattern'],
  ),
  tool(
    'Read',
    'Reads a file from the local filesystem.',
    {
      file_path: str('The absolute path to the file to read'),
      offset: num('The line number to start reading from.'),
      limit: num('The number of lines to read.'),
    },
    ['file_path'],
  ),
  tool(
    'Edit',
    'Performs exact string replacements in files.',
    {
      file_path: str('The absolute path to the file to modify'),
      old_string: str('The text to replace'),
      new_string: str('The text to replace it with (must be different from old_string)'),
      replace_all: { type: 'boolean', default: false, description: 'Replace all occurences of old_string' },
    },
    ['file_path', 'old_string', 'new_string'],
  ),
  tool(
    'Write',
    'Writes a file to the local filesystem.',
    { file_path: str('The absolute path to the file to write'), content: str('The content to write') },
    ['file_path', 'content'],
  ),
  tool(
    'TodoWrite',
    'Use this tool to create and manage a structured task list for your current coding session.',
    {
      todos: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            content: { type: 'string', minLength: 1 },
            status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] },
            id: { type: 'string' },
          },
          required: ['content', 'status', 'id'],
          additionalProperties: false,
        },
        description: 'The updated todo list',
      },
    },
    ['todos'],
  ),
  {
    ...tool(
      'WebFetch',
      'Fetches content from a specified URL and processes it using an AI model.',
      {
        url: { type: 'string', format: 'uri', description: 'The URL to fetch content from' },
        prompt: str('The prompt to run on the fetched content'),
      },
      ['url', 'prompt'],
    ),
    cache_control: { type: 'ephemeral' },
  },
];

/** What the CLI sends besides the key (x-api-key) and our gate header. */
export const CLAUDE_CODE_HEADERS = {
  'anthropic-version': '2023-06-01',
  // oauth-… is the CLI's sign-in beta: meaningless with the gateway's own key, so never forwarded.
  'anthropic-beta':
    'claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14',
  'anthropic-dangerous-direct-browser-access': 'true',
  'x-app': 'cli',
  'user-agent': 'claude-cli/1.0.98 (external, cli)',
  'x-stainless-lang': 'js',
  'x-stainless-package-version': '0.60.0',
};

export const FORWARDED_BETA_HEADER =
  'claude-code-20250219,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14';

const SYSTEM = [
  {
    type: 'text',
    text: "You are Claude Code, Anthropic's official CLI for Claude.",
    cache_control: { type: 'ephemeral' },
  },
  {
    type: 'text',
    text:
      'You are an interactive CLI tool that helps users with software engineering tasks. ' +
      'Use the instructions below and the tools available to you to assist the user.\n\n' +
      '# Tone and style\nYou should be concise, direct, and to the point.\n\n' +
      '<env>\nWorking directory: /repo\nIs directory a git repo: Yes\nPlatform: linux\n</env>',
    cache_control: { type: 'ephemeral' },
  },
];

const METADATA = {
  user_id: 'user_5f2d8c1e_account__session_7a1b4c3d-0e9f-4a2b-8c6d-1e2f3a4b5c6d',
};

export const READ_CALL = {
  id: 'toolu_01VzCJ8gq9vSg2K6yXmz1bQd',
  name: 'Read',
  input: { file_path: '/repo/src/sum.test.ts' },
};
export const EDIT_CALL = {
  id: 'toolu_01Hq3nB6WdcmJb7oYtLk2RfE',
  name: 'Edit',
  input: { file_path: '/repo/src/sum.ts', old_string: 'return a - b;', new_string: 'return a + b;' },
};
export const REASONING = {
  parts: ['The test fails; ', 'read it before changing anything.'],
  signature: 'EqQBCkYIBxABGAIiQL2xm0bq3f9nQ7Xy0J4Yw1Wc9b8s6E1k2Vt7sR3Kpw==',
};
const TEST_FILE =
  "     1\timport { expect, it } from 'vitest';\n     2\timport { sum } from './sum';\n" +
  "     3\t\n     4\tit('adds', () => expect(sum(2, 3)).toBe(5));\n";

const userTask = {
  role: 'user',
  content: [
    {
      type: 'text',
      text: '<system-reminder>\nThis is a reminder that your todo list is currently empty.\n</system-reminder>',
    },
    {
      type: 'text',
      text: 'The test in src/sum.test.ts fails. Fix it.',
      cache_control: { type: 'ephemeral' },
    },
  ],
};

const firstAnswer = {
  role: 'assistant',
  content: [
    { type: 'thinking', thinking: REASONING.parts.join(''), signature: REASONING.signature },
    { type: 'text', text: "I'll read the test first." },
    { type: 'tool_use', ...READ_CALL },
  ],
};

const readResult = {
  role: 'user',
  content: [
    {
      type: 'tool_result',
      tool_use_id: READ_CALL.id,
      content: TEST_FILE,
      cache_control: { type: 'ephemeral' },
    },
  ],
};

const secondAnswer = { role: 'assistant', content: [{ type: 'tool_use', ...EDIT_CALL }] };

const editResult = {
  role: 'user',
  content: [
    {
      type: 'tool_result',
      tool_use_id: EDIT_CALL.id,
      content: [{ type: 'text', text: 'The file /repo/src/sum.ts has been updated.' }],
      is_error: false,
      cache_control: { type: 'ephemeral' },
    },
  ],
};

const turn = (messages: unknown[]) => ({
  model: 'claude-sonnet-4-5-20250929',
  max_tokens: 32000,
  temperature: 1,
  system: SYSTEM,
  messages,
  tools: CLAUDE_CODE_TOOLS,
  metadata: METADATA,
  thinking: { type: 'enabled', budget_tokens: 4000 },
  stream: true,
});

/** The session's requests in order; the first is the CLI's non-streamed quota probe. */
export const CLAUDE_CODE_SESSION = [
  {
    model: 'claude-3-5-haiku-20241022',
    max_tokens: 1,
    messages: [{ role: 'user', content: 'quota' }],
    metadata: METADATA,
  },
  turn([userTask]),
  turn([userTask, firstAnswer, readResult]),
  turn([userTask, firstAnswer, readResult, secondAnswer, editResult]),
];
