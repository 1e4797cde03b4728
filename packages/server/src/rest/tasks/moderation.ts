/**
 * Moderation over HTTP: POST /v3/moderation (each verdict in the provider's own categories) and
 * OpenAI's POST /v1/moderations (OpenAI's categories, whichever provider answered).
 */
import { z } from 'zod';
import type { TaskOutcome } from '../../dataplane/pipeline.ts';
import { metadata, params } from '../../dataplane/request.ts';
import {
  type ModerationRequest,
  moderationData,
  moderationInput,
  moderationKind,
  moderationRequest,
  nativeModerationSchema,
} from '../../dataplane/tasks/moderation.ts';
import { parseWith } from '../../domain/errors.ts';
import {
  type ModerationAnswer,
  type ModerationResult,
  OPENAI_CATEGORIES,
} from '../../providers/tasks/moderation.ts';
import type { NativeTask, OpenAITask } from './routes.ts';

function usageOf(o: TaskOutcome<ModerationAnswer>) {
  return { promptTokens: o.usage.promptTokens, ...(o.tokensEstimated && { estimated: true }) };
}

export const nativeModeration: NativeTask<ModerationRequest, ModerationAnswer> = {
  path: 'moderation',
  kind: moderationKind,
  doc: {
    summary: 'Moderate texts through a gate',
    body: nativeModerationSchema,
    ok: { description: "`results` (one verdict per input, in the provider's categories) and `usage`" },
  },
  parse(body) {
    const { data, gateId: _gateId, ...envelope } = parseWith(nativeModerationSchema, body);
    return moderationRequest(data, envelope);
  },
  answer(o) {
    return {
      results: o.answer.results.map((r) => ({
        flagged: r.flagged,
        categories: r.categories,
        scores: r.scores,
      })),
      usage: usageOf(o),
    };
  },
};

/**
 * Mistral's categories as OpenAI's: what an OpenAI client reads when a Mistral model answered.
 * Mistral's health, financial, law and pii have no OpenAI counterpart: they still flag the input.
 */
const FROM_MISTRAL: Record<string, string> = {
  sexual: 'sexual',
  hate_and_discrimination: 'hate',
  violence_and_threats: 'violence',
  dangerous_and_criminal_content: 'illicit',
  selfharm: 'self-harm',
};

/** One verdict in OpenAI's shape: every OpenAI category present, as OpenAI's SDK expects. */
function openAIResult(r: ModerationResult) {
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  for (const name of OPENAI_CATEGORIES) {
    categories[name] = false;
    scores[name] = 0;
  }
  for (const [name, flagged] of Object.entries(r.categories)) {
    const target = (OPENAI_CATEGORIES as readonly string[]).includes(name) ? name : FROM_MISTRAL[name];
    if (target === undefined) continue;
    categories[target] = (categories[target] ?? false) || flagged;
    scores[target] = Math.max(scores[target] ?? 0, r.scores[name] ?? 0);
  }
  return {
    flagged: r.flagged,
    categories,
    category_scores: scores,
    ...(r.appliedInputTypes && { category_applied_input_types: r.appliedInputTypes }),
  };
}

const openAIModerationSchema = z.object({
  // OpenAI's own default when none is named; here, the gate's model.
  model: params.model.optional(),
  input: moderationInput,
  gateId: z.uuid().optional(),
  metadata: metadata.optional(),
});

export const openAIModeration: OpenAITask<ModerationRequest, ModerationAnswer> = {
  path: 'moderations',
  kind: moderationKind,
  doc: {
    summary: "Moderations, in OpenAI's wire format",
    body: openAIModerationSchema.loose(),
    ok: { description: "The results in OpenAI's categories, whichever provider answered" },
  },
  parse(body, modelIsGate) {
    const b = parseWith(openAIModerationSchema, body);
    return moderationRequest(moderationData.parse({ input: b.input }), {
      ...(!modelIsGate && b.model !== undefined && { model: b.model }),
      ...(b.metadata && { metadata: b.metadata }),
    });
  },
  answer(o) {
    return { id: o.id, model: o.modelUsed, results: o.answer.results.map(openAIResult) };
  },
};
