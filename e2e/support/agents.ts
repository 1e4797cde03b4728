/**
 * The real coding agents, installed from npm at pinned versions (e2e devDependencies), run as a
 * user runs them against a gateway: Claude Code in print mode and Codex CLI's `exec`, each in a
 * fresh HOME, with telemetry, update checks and other side traffic off by their documented settings,
 * and every proxy variable pointing at a closed loopback port, so that a request to anywhere but
 * 127.0.0.1 fails instead of leaving the machine.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);

export type AgentRun = { code: number | null; stdout: string; stderr: string };

/**
 * Where the agent sends its requests (the gateway, or the upstream itself), and the gate it names:
 * by header (the default), or as its model, `gatehouse/<gate>`, with no header at all.
 */
export type GatewayTarget = { url: string; apiKey: string; gateId: string; gateAsModel?: boolean };

/** A temporary folder holding one file the agent is asked to read; `secret` is its text. */
export type Workspace = { dir: string; file: string; secret: string; home: string; remove(): Promise<void> };

export async function workspace(): Promise<Workspace> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-agent-'));
  const dir = path.join(root, 'work');
  const home = path.join(root, 'home');
  await mkdir(dir);
  await mkdir(home);
  const secret = `gatehouse-secret-${crypto.randomUUID()}`;
  const file = path.join(dir, 'notes.txt');
  await writeFile(file, `${secret}\n`);
  return { dir, file, secret, home, remove: () => rm(root, { recursive: true, force: true }) };
}

/** What every agent run gets: no variable of the test's own environment but PATH. */
function baseEnv(home: string): Record<string, string> {
  const closed = 'http://127.0.0.1:9';
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    HTTP_PROXY: closed,
    HTTPS_PROXY: closed,
    ALL_PROXY: closed,
    http_proxy: closed,
    https_proxy: closed,
    all_proxy: closed,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
}

function run(command: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs: number) {
  return new Promise<AgentRun>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    // A bound on a stuck agent (one waiting for a prompt, say), not on how fast it works.
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Claude Code's native binary. The wrapper package's postinstall would copy it into place; pnpm
 * does not run that script (it is not in onlyBuiltDependencies), so the binary is run from the
 * platform package the wrapper depends on.
 */
export function claudeCodeBinary(): string {
  const wrapper = require.resolve('@anthropic-ai/claude-code/package.json');
  return createRequire(wrapper).resolve('@anthropic-ai/claude-code-linux-x64/claude');
}

/** What `claude -p --output-format json` prints at the end of a run. */
export type ClaudeResult = {
  type: 'result';
  subtype: string;
  is_error: boolean;
  result: string;
  num_turns: number;
  api_error_status?: number | null;
};

/** `claude -p "<prompt>" --output-format json` in `ws.dir`, through the gateway's /v1/messages. */
export async function runClaudeCode(ws: Workspace, target: GatewayTarget, prompt: string) {
  const env = {
    ...baseEnv(ws.home),
    ANTHROPIC_BASE_URL: target.url,
    ANTHROPIC_API_KEY: target.apiKey,
    ...(target.gateAsModel
      ? { ANTHROPIC_MODEL: `gatehouse/${target.gateId}` }
      : { ANTHROPIC_CUSTOM_HEADERS: `x-gatehouse-gate-id: ${target.gateId}` }),
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  const outcome = await run(
    claudeCodeBinary(),
    // Print mode asks no questions: the Read tool is allowed up front, nothing else is.
    ['-p', prompt, '--output-format', 'json', '--allowedTools', 'Read'],
    ws.dir,
    env,
    120_000,
  );
  let result: ClaudeResult | null = null;
  try {
    result = JSON.parse(outcome.stdout.trim().split('\n').at(-1) ?? '') as ClaudeResult;
  } catch {
    result = null;
  }
  return { ...outcome, result };
}

/** The model Codex believes it talks to: one its catalog knows, so it sends its full tool set. */
export const CODEX_MODEL = 'gpt-5.5';

/**
 * `codex exec --skip-git-repo-check "<prompt>"` in `ws.dir`, through the gateway's /v1/responses:
 * a `model_providers` entry in $HOME/.codex/config.toml points at {gateway}/v1 with the key in an
 * environment variable and the gate in `http_headers`. The final message is read from the file
 * `--output-last-message` writes.
 */
export async function runCodex(ws: Workspace, target: GatewayTarget, prompt: string) {
  const codexHome = path.join(ws.home, '.codex');
  await mkdir(codexHome, { recursive: true });
  await writeFile(
    path.join(codexHome, 'config.toml'),
    [
      `model = "${target.gateAsModel ? `gatehouse/${target.gateId}` : CODEX_MODEL}"`,
      'model_provider = "gatehouse"',
      'check_for_update_on_startup = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[feedback]',
      'enabled = false',
      '',
      '[model_providers.gatehouse]',
      'name = "Gatehouse"',
      `base_url = "${target.url}/v1"`,
      'wire_api = "responses"',
      'env_key = "GATEHOUSE_API_KEY"',
      // Codex retries a failed request itself; once is enough to see what the gateway answered.
      'request_max_retries = 0',
      'stream_max_retries = 0',
      target.gateAsModel ? '' : `http_headers = { "x-gatehouse-gate-id" = "${target.gateId}" }`,
      '',
    ].join('\n'),
  );
  const lastMessage = path.join(ws.home, 'last-message.txt');
  const outcome = await run(
    process.execPath,
    [
      require.resolve('@openai/codex/bin/codex.js'),
      'exec',
      '--skip-git-repo-check',
      '--output-last-message',
      lastMessage,
      prompt,
    ],
    ws.dir,
    { ...baseEnv(ws.home), CODEX_HOME: codexHome, GATEHOUSE_API_KEY: target.apiKey },
    120_000,
  );
  const final = await readFile(lastMessage, 'utf8').catch(() => null);
  return { ...outcome, final };
}
