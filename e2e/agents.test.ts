import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AgentRun, runClaudeCode, runCodex, type Workspace, workspace } from './support/agents.ts';
import type { LoggedEntry } from './support/logsApi.ts';
import { type ModelUpstream, startModelUpstream, USAGE, type Wire } from './support/modelUpstream.ts';
import { type SdkAccount, signUpForSdk } from './support/sdk.ts';
import { type RunningServer, startServer } from './support/server.ts';

/**
 * Claude Code and Codex CLI, the real agents at pinned versions, through the real server process
 * with the gate named by header: each asked to read a file in a temporary folder and say what it
 * holds. The model behind the gate is a local server of Anthropic's or OpenAI's wire
 * (support/modelUpstream.ts) that first calls the agent's own file-reading tool and then quotes
 * the tool's result, so the file's secret text can only reach the final answer through a tool the
 * agent ran and a result it sent back through the gateway. Each agent goes to a gate of its own
 * family (its requests passed through as sent) and to one of the other family (translated).
 */
// An agent is a large native binary started cold, twice in the control: room for a loaded machine.
describe('coding agents through Gatehouse', { timeout: 180_000 }, () => {
  let server: RunningServer;
  let account: SdkAccount;
  let anthropic: ModelUpstream;
  let openai: ModelUpstream;
  const workspaces: Workspace[] = [];

  beforeAll(async () => {
    anthropic = await startModelUpstream('anthropic', 'sk-ant-agents');
    openai = await startModelUpstream('openai', 'sk-openai-agents');
    server = await startServer({
      ANTHROPIC_API_KEY: anthropic.apiKey,
      ANTHROPIC_BASE_URL: anthropic.baseUrl,
      OPENAI_API_KEY: openai.apiKey,
      OPENAI_BASE_URL: openai.baseUrl,
    });
    account = await signUpForSdk(server.url, 'agents');
  });

  afterEach(async () => {
    for (const ws of workspaces.splice(0)) await ws.remove();
  });

  afterAll(async () => {
    await server?.stop();
    await anthropic?.close();
    await openai?.close();
  });

  const GATE_MODELS = { anthropic: 'anthropic/claude-sonnet-4-5', openai: 'openai/gpt-5-mini' } as const;

  /** A task: a gate on `upstream`'s family, a folder with the file to read, the upstream primed. */
  async function task(upstream: ModelUpstream) {
    const gateId = await account.createGate({ model: GATE_MODELS[upstream.family] });
    const ws = await workspace();
    workspaces.push(ws);
    upstream.startTask(ws.file);
    const prompt = `Read the file ${ws.file} and tell me what it says.`;
    return { ws, prompt, target: { url: server.url, apiKey: account.apiKey, gateId } };
  }

  /** The gate's entries, once `count` are written (the log writer batches them), oldest first. */
  async function gateLogs(gateId: string, count: number): Promise<LoggedEntry[]> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await fetch(`${server.url}/v1/logs?gateId=${gateId}&limit=200`, {
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      const logs = ((await res.json()) as { logs: LoggedEntry[] }).logs;
      if (logs.length >= count || Date.now() > deadline) return logs.reverse();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * What a finished task shows on the provider's side and in the gateway's log: the upstream made
   * its one call to the agent's tool and got the file's text back as that call's result, on the
   * expected wire, and the gateway logged each model request once, with its usage and cost, the
   * tool call on the request that made it and the tool's result on the one that carried it.
   */
  async function expectToolRoundTrip(
    upstream: ModelUpstream,
    gateId: string,
    ws: Workspace,
    expected: { tool: string; wires: Wire[] },
  ) {
    const call = upstream.call();
    expect(call?.name).toBe(expected.tool);
    expect(upstream.toolResult()).toContain(ws.secret);
    const requests = upstream.modelRequests();
    expect(requests.length).toBeGreaterThanOrEqual(2);
    for (const r of requests) {
      expect(expected.wires).toContain(r.wire);
      // The gate's model, not the one the agent asked for.
      expect(r.body.model).toBe(GATE_MODELS[upstream.family].split('/')[1]);
    }

    const logs = await gateLogs(gateId, requests.length);
    expect(logs).toHaveLength(requests.length);
    for (const entry of logs) {
      expect(entry).toMatchObject({
        gate_id: gateId,
        model_used: GATE_MODELS[upstream.family],
        success: true,
        status_code: 200,
        prompt_tokens: USAGE.input,
        completion_tokens: USAGE.output,
      });
      expect(entry.cost_usd).toBeGreaterThan(0);
    }
    const withCall = logs.filter((e) => JSON.stringify(e.tool_calls ?? null).includes(call?.id ?? '?'));
    expect(withCall).toHaveLength(1);
    expect(withCall[0]?.tool_calls).toEqual([
      expect.objectContaining({ id: call?.id, function: expect.objectContaining({ name: expected.tool }) }),
    ]);
    const withResult = logs.filter((e) => JSON.stringify(e.tool_results ?? null).includes(ws.secret));
    expect(withResult.length).toBeGreaterThanOrEqual(1);
    expect(logs.indexOf(withResult[0] as LoggedEntry)).toBeGreaterThan(
      logs.indexOf(withCall[0] as LoggedEntry),
    );
  }

  /** What an agent said went wrong, for a failure message: Claude Code's result, Codex's errors. */
  const shown = (run: AgentRun & { result?: { result?: string } | null }) =>
    `exit ${run.code}: ${
      run.result?.result ??
      (run.stderr
        .split('\n')
        .filter((line) => line.startsWith('ERROR'))
        .at(-1) ||
        run.stderr.slice(-2000))
    }`;

  // The control: each agent straight at its own family's upstream, no gateway between them, does
  // the task. A failure below it is then the gateway's, not the harness's.
  it('the agents do the task against the upstream itself', async () => {
    const claudeWs = await workspace();
    const codexWs = await workspace();
    workspaces.push(claudeWs, codexWs);
    const direct = (upstream: ModelUpstream) => ({
      url: upstream.url,
      apiKey: upstream.apiKey,
      gateId: 'none',
    });

    anthropic.startTask(claudeWs.file);
    const claude = await runClaudeCode(claudeWs, direct(anthropic), `Read the file ${claudeWs.file}.`);
    expect(claude.result?.is_error, shown(claude)).toBe(false);
    expect(claude.result?.result).toContain(claudeWs.secret);
    expect(anthropic.call()?.name).toBe('Read');
    expect(anthropic.toolResult()).toContain(claudeWs.secret);

    openai.startTask(codexWs.file);
    const codex = await runCodex(codexWs, direct(openai), `Read the file ${codexWs.file}.`);
    expect(codex.code, shown(codex)).toBe(0);
    expect(codex.final).toContain(codexWs.secret);
    expect(openai.call()?.name).toBe('exec_command');
    expect(openai.toolResult()).toContain(codexWs.secret);
    expect(openai.modelRequests().map((r) => r.wire)).toEqual(['responses', 'responses']);
  });

  it('Claude Code reads a file through a gate on an Anthropic model, its requests passed through', async () => {
    const { ws, prompt, target } = await task(anthropic);
    const run = await runClaudeCode(ws, target, prompt);
    expect(run.result?.is_error, shown(run)).toBe(false);
    expect(run.result?.subtype).toBe('success');
    expect(run.result?.result).toContain(ws.secret);
    expect(run.code).toBe(0);
    await expectToolRoundTrip(anthropic, target.gateId, ws, { tool: 'Read', wires: ['messages'] });

    // Same family, same wire: what Claude Code sends that the gateway has no model of reaches
    // Anthropic as sent (its mid-conversation system message, context management, effort).
    const first = anthropic.modelRequests()[0]?.body;
    expect(first.messages.some((m: { role: string }) => m.role === 'system')).toBe(true);
    expect(first.context_management).toEqual(expect.objectContaining({ edits: expect.any(Array) }));
    expect(first.output_config).toEqual(expect.objectContaining({ effort: expect.any(String) }));
  });

  it('Codex CLI reads a file through a gate on an OpenAI model, its requests passed through', async () => {
    const { ws, prompt, target } = await task(openai);
    const run = await runCodex(ws, target, prompt);
    expect(run.code, shown(run)).toBe(0);
    expect(run.final).toContain(ws.secret);
    await expectToolRoundTrip(openai, target.gateId, ws, { tool: 'exec_command', wires: ['responses'] });

    // Same family, same wire: Codex's free-form apply_patch tool, its hosted tools and its
    // request fields reach OpenAI's Responses API as sent.
    const first = openai.modelRequests()[0]?.body;
    const toolTypes = (first.tools as { type: string; name?: string }[]).map(
      (t) => `${t.type}:${t.name ?? ''}`,
    );
    expect(toolTypes).toEqual(
      expect.arrayContaining(['custom:apply_patch', 'function:exec_command', 'web_search:']),
    );
    expect(first.input.some((m: { role?: string }) => m.role === 'developer')).toBe(true);
    expect(first).toEqual(
      expect.objectContaining({
        store: false,
        include: ['reasoning.encrypted_content'],
        prompt_cache_key: expect.any(String),
        client_metadata: expect.any(Object),
      }),
    );
  });

  // Across families the agents name the gate as their model, the configuration docs/api.md shows.
  it('Claude Code reads a file through a gate on an OpenAI model, translated, the gate named as its model', async () => {
    const { ws, prompt, target } = await task(openai);
    const run = await runClaudeCode(ws, { ...target, gateAsModel: true }, prompt);
    expect(run.result?.is_error, shown(run)).toBe(false);
    expect(run.result?.result).toContain(ws.secret);
    expect(run.code).toBe(0);
    await expectToolRoundTrip(openai, target.gateId, ws, { tool: 'Read', wires: ['chat', 'responses'] });
  });

  it('Codex CLI reads a file through a gate on an Anthropic model, translated, the gate named as its model', async () => {
    const { ws, prompt, target } = await task(anthropic);
    const run = await runCodex(ws, { ...target, gateAsModel: true }, prompt);
    expect(run.code, shown(run)).toBe(0);
    expect(run.final).toContain(ws.secret);
    await expectToolRoundTrip(anthropic, target.gateId, ws, { tool: 'exec_command', wires: ['messages'] });
  });
});
