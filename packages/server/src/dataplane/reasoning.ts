/**
 * Reasoning settings across families, for a drop-in request translated to another family's
 * model. OpenAI asks for an effort (`reasoning_effort`, Responses `reasoning.effort`), Anthropic
 * for a thinking budget (`thinking: {type: "enabled", budget_tokens}`). Each is turned into the
 * other where the answering model takes it; where it does not, or the request rules it out, the
 * setting is left out and named, like any other field a translation drops.
 */
import { ANTHROPIC_DEFAULT_MAX_TOKENS } from '../providers/anthropic.ts';
import type { ChatParams, ReasoningEffort, ThinkingConfig, WireApi } from '../providers/types.ts';

/** Where each drop-in wire format asks for an effort, to name it when it is left out. */
export const EFFORT_FIELD: Record<WireApi, string> = {
  'openai-responses': 'reasoning.effort',
  'openai-chat': 'reasoning_effort',
  'anthropic-messages': 'output_config.effort',
};

/**
 * The thinking budget of each effort, in tokens: Anthropic's least (1,024) for `minimal`, then
 * the budgets Claude Code itself asks for its "think", "think hard" and "ultrathink" levels
 * (about 4,000, 10,000 and 32,000), and twice the last for `xhigh`.
 */
export const THINKING_BUDGETS: Record<Exclude<ReasoningEffort, 'none'>, number> = {
  minimal: 1_024,
  low: 4_000,
  medium: 10_000,
  high: 32_000,
  xhigh: 64_000,
};

/** Anthropic takes no thinking budget below this. */
export const MIN_THINKING_BUDGET = 1_024;

/**
 * The budget of `effort` fitted under the output cap: at most half of max_tokens (thinking counts
 * toward it, and the answer needs the rest), and never below Anthropic's least; null when no
 * budget fits (max_tokens under 2,048).
 */
export function thinkingBudget(effort: Exclude<ReasoningEffort, 'none'>, maxTokens: number): number | null {
  const budget = Math.min(THINKING_BUDGETS[effort], Math.floor(maxTokens / 2));
  return budget >= MIN_THINKING_BUDGET ? budget : null;
}

/**
 * The effort nearest a thinking budget (the geometric middles between the budgets above are the
 * bounds); `minimal` is never chosen, since OpenAI's older reasoning models refuse it. Adaptive
 * thinking leaves the effort to the model, as no effort does: undefined.
 */
export function effortOfThinking(thinking: ThinkingConfig): ReasoningEffort | undefined {
  if (thinking.type !== 'enabled') return undefined;
  if (thinking.budget_tokens < 6_000) return 'low';
  if (thinking.budget_tokens < 18_000) return 'medium';
  return 'high';
}

/**
 * Whether Anthropic would refuse thinking on this request: it takes no temperature but 1, no
 * top_p under 0.95, no forced tool, and in a tool loop (the assistant turns with tool calls since
 * the user last wrote) it wants the thinking that began the loop back, which a conversation
 * translated from another family does not carry.
 */
function thinkingRuledOut(params: ChatParams): boolean {
  if (params.temperature !== undefined && params.temperature !== 1) return true;
  if (params.topP !== undefined && params.topP < 0.95) return true;
  if (params.toolChoice === 'required' || typeof params.toolChoice === 'object') return true;
  const wrote = params.messages.findLastIndex((m) => m.role === 'user');
  const loop = params.messages.slice(wrote + 1).filter((m) => m.role === 'assistant');
  const first = loop[0];
  return loop.some((m) => (m.tool_calls?.length ?? 0) > 0) && !first?.thinking?.length;
}

/** What the answering model takes: its provider, and whether the catalog says it reasons. */
export type ReasoningTarget = { provider: string; reasons: boolean };

/**
 * `params` with its reasoning setting in the form `target` takes, and the names of what was left
 * out (`effortField`: where the client put its effort, `reasoning.effort` or `reasoning_effort`):
 * - Anthropic: an effort becomes thinking with its budget (thinkingBudget), unless thinking is
 *   ruled out (thinkingRuledOut) or no budget fits; `none` is no thinking.
 * - OpenAI models that reason: thinking becomes an effort (effortOfThinking); thinking disabled
 *   cannot be honoured (they always reason) and is named.
 * - Any other model: neither is sent; an effort other than `none`, or thinking other than
 *   disabled, is named.
 */
export function reasoningFor(
  target: ReasoningTarget,
  params: ChatParams,
  effortField: string,
): { params: ChatParams; dropped: string[] } {
  const { thinking, reasoningEffort: effort, ...rest } = params;
  if (thinking === undefined && effort === undefined) return { params, dropped: [] };
  const dropped: string[] = [];
  if (target.provider === 'anthropic') {
    if (thinking) return { params: { ...rest, thinking }, dropped };
    if (effort === undefined || effort === 'none') return { params: rest, dropped };
    const budget = thinkingBudget(effort, params.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS);
    if (budget === null || thinkingRuledOut(params)) return { params: rest, dropped: [effortField] };
    return { params: { ...rest, thinking: { type: 'enabled', budget_tokens: budget } }, dropped };
  }
  if (target.provider === 'openai' && target.reasons) {
    if (thinking?.type === 'disabled') dropped.push('thinking');
    const wanted = effort ?? (thinking ? effortOfThinking(thinking) : undefined);
    return { params: { ...rest, ...(wanted && { reasoningEffort: wanted }) }, dropped };
  }
  if (effort !== undefined && effort !== 'none') dropped.push(effortField);
  if (thinking !== undefined && thinking.type !== 'disabled') dropped.push('thinking');
  return { params: rest, dropped };
}
