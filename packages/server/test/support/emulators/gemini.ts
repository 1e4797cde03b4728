/**
 * Google's Gemini API (v1beta generateContent and streamGenerateContent?alt=sse): a
 * GenerateContentResponse per answer or per SSE chunk (CRLF-separated, as Google sends them),
 * functionCall parts with thought signatures, safety blocks, Google's error bodies, and the
 * checks the real endpoint makes first (it rejects unknown fields, and on Gemini 3 a replayed
 * function call without its thought signature).
 */
import { type Gatekeeper, type Reply, sseFrame, startUpstream } from './upstream.ts';

export type GeminiUsage = { prompt: number; candidates: number; cached?: number; thoughts?: number };

export type GeminiPart =
  | { text: string; thought?: boolean }
  | { functionCall: { name: string; args: Record<string, unknown>; id?: string }; thoughtSignature?: string };

function usageBody(u: GeminiUsage) {
  return {
    promptTokenCount: u.prompt,
    candidatesTokenCount: u.candidates,
    totalTokenCount: u.prompt + u.candidates + (u.thoughts ?? 0),
    ...(u.cached !== undefined && { cachedContentTokenCount: u.cached }),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: u.prompt }],
    ...(u.thoughts !== undefined && { thoughtsTokenCount: u.thoughts }),
  };
}

export function response(a: {
  parts?: GeminiPart[];
  finishReason?: string;
  usage?: GeminiUsage;
  model?: string;
}) {
  return {
    candidates: [
      {
        content: { parts: a.parts ?? [{ text: 'Hello there.' }], role: 'model' },
        finishReason: a.finishReason ?? 'STOP',
        index: 0,
      },
    ],
    usageMetadata: usageBody(a.usage ?? { prompt: 8, candidates: 12 }),
    modelVersion: a.model ?? 'gemini-2.5-flash',
    responseId: 'mIDSaKmIKYbMz7IPsP3twQ4',
  };
}

/** A candidate stopped by the safety filters: no content, only the reason and the ratings. */
export function blockedCandidate(finishReason = 'SAFETY') {
  return {
    candidates: [
      {
        finishReason,
        index: 0,
        safetyRatings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }],
      },
    ],
    usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
    modelVersion: 'gemini-2.5-flash',
  };
}

/** A prompt refused before any candidate: `promptFeedback.blockReason`. */
export function blockedPrompt(blockReason = 'SAFETY') {
  return {
    promptFeedback: {
      blockReason,
      safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'HIGH' }],
    },
    usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
    modelVersion: 'gemini-2.5-flash',
  };
}

/**
 * A streamed answer: one chunk per entry of `chunks` (each a list of parts), usage on every chunk
 * as Google sends it (growing), finishReason on the last.
 */
export function streamFrames(a: {
  chunks: GeminiPart[][];
  finishReason?: string;
  usage?: GeminiUsage;
  model?: string;
}): string[] {
  const usage = a.usage ?? { prompt: 8, candidates: 12 };
  return a.chunks.map((parts, i) => {
    const last = i === a.chunks.length - 1;
    const chunk = {
      candidates: [
        {
          content: { parts, role: 'model' },
          ...(last && { finishReason: a.finishReason ?? 'STOP' }),
          index: 0,
        },
      ],
      usageMetadata: last
        ? usageBody(usage)
        : { promptTokenCount: usage.prompt, totalTokenCount: usage.prompt + i + 1 },
      modelVersion: a.model ?? 'gemini-2.5-flash',
      responseId: 'mIDSaKmIKYbMz7IPsP3twQ4',
    };
    return sseFrame(chunk, undefined, '\r\n');
  });
}

export function chunkFrame(chunk: unknown): string {
  return sseFrame(chunk, undefined, '\r\n');
}

const STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function errorBody(status: number, message: string) {
  return { error: { code: status, message, status: STATUSES[status] ?? 'UNKNOWN' } };
}

export function errorReply(status: number, message: string): Reply {
  return { type: 'json', status, body: errorBody(status, message) };
}

const FIELDS = new Set([
  'contents',
  'systemInstruction',
  'generationConfig',
  'tools',
  'toolConfig',
  'safetySettings',
  'cachedContent',
]);
const GENERATION_FIELDS = new Set([
  'temperature',
  'topP',
  'topK',
  'candidateCount',
  'maxOutputTokens',
  'stopSequences',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'thinkingConfig',
  'responseModalities',
]);

type Content = { role?: string; parts?: Record<string, unknown>[] };

const unknownName = (name: string) =>
  errorReply(400, `Invalid JSON payload received. Unknown name "${name}": Cannot find field.`);

export function gatekeeper(apiKey: string): Gatekeeper {
  return (request) => {
    const route = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)(\?.*)?$/.exec(
      request.path,
    );
    if (request.method !== 'POST' || !route) return errorReply(404, `Not found: ${request.path}`);
    if (route[2] === 'streamGenerateContent' && route[3] !== '?alt=sse') {
      return errorReply(400, 'emulator: streamGenerateContent without alt=sse answers a JSON array, not SSE');
    }
    if (request.headers['x-goog-api-key'] !== apiKey) {
      return errorReply(400, 'API key not valid. Please pass a valid API key.');
    }
    const model = decodeURIComponent(route[1] as string);
    const body = request.body as Record<string, unknown> & {
      contents?: Content[];
      generationConfig?: Record<string, unknown>;
    };
    for (const key of Object.keys(body)) if (!FIELDS.has(key)) return unknownName(key);
    for (const key of Object.keys(body.generationConfig ?? {})) {
      if (!GENERATION_FIELDS.has(key)) return unknownName(`generation_config.${key}`);
    }
    const contents = body.contents ?? [];
    if (contents.length === 0)
      return errorReply(400, '* GenerateContentRequest.contents: contents is not specified');
    for (const [i, c] of contents.entries()) {
      if (c.role !== 'user' && c.role !== 'model') {
        return errorReply(400, `Please use a valid role: user, model. (contents[${i}].role = ${c.role})`);
      }
      if (!c.parts?.length)
        return errorReply(
          400,
          `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`,
        );
    }
    if (model.startsWith('gemini-3')) {
      // The current turn starts after the last user content that is not only function responses.
      let start = 0;
      contents.forEach((c, i) => {
        if (c.role === 'user' && c.parts?.some((p) => !('functionResponse' in p))) start = i + 1;
      });
      for (const [i, c] of contents.entries()) {
        if (i < start || c.role !== 'model') continue;
        const first = c.parts?.find((p) => 'functionCall' in p);
        if (first && typeof first.thoughtSignature !== 'string') {
          const name = (first.functionCall as { name: string }).name;
          return errorReply(
            400,
            `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${i + 1}.`,
          );
        }
      }
    }
    return null;
  };
}

export async function startGeminiEmulator(apiKey = 'gemini-test-key') {
  const upstream = await startUpstream(gatekeeper(apiKey));
  return { upstream, baseUrl: upstream.url, apiKey };
}
