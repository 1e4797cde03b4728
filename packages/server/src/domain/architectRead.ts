/**
 * Reading a gate's description for the Architect: which task it is, which capabilities the model
 * needs, and a clearer description to offer. Two ways, both documented in docs/architect.md:
 * - by a language model, when GATEHOUSE_ARCHITECT_MODEL names a catalog chat model: one chat
 *   request through the gateway's own data plane with a JSON schema, logged and costed under the
 *   owner like any request (gate name "Gatehouse Architect", no gate);
 * - by the rules below otherwise, or when that request fails (the analysis says so).
 */
import type { QualityKind } from '@gatehouse/rules/architect';
import { GATE_DEFAULTS, TASK_SUBTYPES, TASK_TYPES, type TaskType } from '@gatehouse/rules/gate';
import { z } from 'zod';
import type { DataPlane } from '../dataplane/chat.ts';
import type { ChatRequest } from '../dataplane/request.ts';
import { type Gate, Prisma } from '../generated/prisma/client.ts';

export const CAPABILITIES = ['tools', 'structuredOutput', 'vision', 'reasoning'] as const;
export type Capability = (typeof CAPABILITIES)[number];
export type TaskSubtype = (typeof TASK_SUBTYPES)[number];

export type DescriptionReading = {
  taskType: TaskType;
  taskSubtype: TaskSubtype | null;
  capabilities: Capability[];
  enhancedDescription: string;
  readBy: 'rules' | 'model';
  /** Why the model's reading was not used, when one was configured. */
  modelProblem?: string;
};

/** Words that name a task type, tried in this order; chat when none matches. */
const TASK_RULES: [RegExp, TaskType][] = [
  [/\bembed(ding)?s?\b|semantic search|similarity|vector (search|store|index)/i, 'embeddings'],
  [/\bmoderat(e|ion|ing)\b|flag (harmful|unsafe|toxic)|content (policy|safety) check/i, 'moderation'],
  [/\bocr\b|scanned (documents?|pages?|pdfs?)|extract (the )?text from (pdfs?|images?|scans?)/i, 'ocr'],
  [/\btranscri(be|bes|ption|ptions)\b|speech[- ]to[- ]text|subtitles? from audio/i, 'stt'],
  [/text[- ]to[- ]speech|\btts\b|read (it |them )?aloud|voice[- ]?over|narrat(e|ion)/i, 'tts'],
  [
    /(generate|create|make|draw|render)s? (an? )?(images?|pictures?|illustrations?|logos?|icons?)|\billustrat/i,
    'image',
  ],
  [/(generate|create|make|render)s? (an? |short )?(videos?|clips?|animations?)/i, 'video'],
];

/** Words that ask for a capability of a chat model. */
const CAPABILITY_RULES: [RegExp, Capability][] = [
  [/\b(tools?|function[- ]call(ing|s)?|call (an |our )?apis?|agent(ic|s)?)\b/i, 'tools'],
  [/\b(json|structured (output|data)|schema|extract (fields|entities|data))\b/i, 'structuredOutput'],
  [/\b(images?|photos?|pictures?|screenshots?|diagrams?|charts?|vision|scans?)\b/i, 'vision'],
  [/\b(step[- ]by[- ]step reasoning|chain of thought|deep reasoning|reasoning model)\b/i, 'reasoning'],
];

const SUBTYPE_RULES: [RegExp, TaskSubtype][] = [
  [
    /\b(code|coding|program(ming)?|refactor|debug|typescript|javascript|python|sql|rust|golang|java)\b/i,
    'code',
  ],
  [/\b(reason(ing)?|math(ematics)?|proofs?|logic|puzzles?|plan(ning)?|analy[sz]e)\b/i, 'reasoning'],
  [/\b(real[- ]?time|live chat|low latency|instant|autocomplete|voice assistant)\b/i, 'realtime'],
];

const CAPABILITY_WORDS: Record<Capability, string> = {
  tools: 'tool calling',
  structuredOutput: 'structured (JSON) output',
  vision: 'image input',
  reasoning: 'a reasoning model',
};

/** The quality figure a subtype asks for (realtime weighs latency, not a quality kind). */
export const qualityKindOf = (subtype: TaskSubtype | null | undefined): QualityKind =>
  subtype === 'code' ? 'code' : subtype === 'reasoning' ? 'reasoning' : 'general';

/**
 * The rules' reading. A task type or subtype given by the caller wins over the words; the
 * capabilities apply to chat only (the other task types have none to ask for).
 */
export function readByRules(
  description: string,
  given: { taskType?: TaskType | undefined; taskSubtype?: TaskSubtype | null | undefined },
): DescriptionReading {
  const taskType = given.taskType ?? TASK_RULES.find(([re]) => re.test(description))?.[1] ?? 'chat';
  const taskSubtype =
    given.taskSubtype ??
    (taskType === 'chat' ? (SUBTYPE_RULES.find(([re]) => re.test(description))?.[1] ?? null) : null);
  const capabilities =
    taskType === 'chat' ? CAPABILITY_RULES.filter(([re]) => re.test(description)).map(([, c]) => c) : [];
  return {
    taskType,
    taskSubtype,
    capabilities: [...new Set(capabilities)],
    enhancedDescription: enhance(description, taskType, taskSubtype, capabilities),
    readBy: 'rules',
  };
}

const ENHANCED_SUFFIX = / ?Task type: [a-z]+(?: \([a-z]+\))?\.(?: It needs [^.]+\.)?$/;

/** The description as one clear paragraph, with what was read from it said outright. */
function enhance(
  description: string,
  taskType: TaskType,
  subtype: TaskSubtype | null,
  caps: Capability[],
): string {
  // What an earlier enhancement added is said again, not twice.
  const text = description.trim().replace(/\s+/g, ' ').replace(ENHANCED_SUFFIX, '');
  const sentence = text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? '' : '.');
  const kind = subtype ? `${taskType} (${subtype})` : taskType;
  const needs = caps.length > 0 ? ` It needs ${caps.map((c) => CAPABILITY_WORDS[c]).join(', ')}.` : '';
  return `${sentence} Task type: ${kind}.${needs}`;
}

const READING_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['taskType', 'taskSubtype', 'capabilities', 'enhancedDescription'],
  properties: {
    taskType: { type: 'string', enum: [...TASK_TYPES] },
    taskSubtype: { type: ['string', 'null'], enum: [...TASK_SUBTYPES, null] },
    capabilities: { type: 'array', items: { type: 'string', enum: [...CAPABILITIES] } },
    enhancedDescription: { type: 'string' },
  },
} as const;

const READING = z.object({
  taskType: z.enum(TASK_TYPES),
  taskSubtype: z.enum(TASK_SUBTYPES).nullable(),
  capabilities: z.array(z.enum(CAPABILITIES)),
  enhancedDescription: z.string(),
});

const READING_PROMPT = `You configure an AI gateway. Read the description of what an application will send to a model and answer with JSON:
- taskType: one of ${TASK_TYPES.join(', ')};
- taskSubtype: code, reasoning or realtime when the task is mostly that, else null;
- capabilities the model must have: tools (function calling), structuredOutput (JSON output), vision (image input), reasoning (a reasoning model); only those the description needs;
- enhancedDescription: the description rewritten as one clear paragraph (at most 600 characters) that says what the task is, its inputs and outputs and what matters most; keep every fact, add none.`;

/** The gateway's Architect as a gate for one request: never stored, no limit, logged with no gate. */
export const ARCHITECT_GATE_ID = '00000000-0000-4000-8000-00000000a7c1';
export const ARCHITECT_GATE_NAME = 'Gatehouse Architect';

function architectGate(userId: string, model: string): Gate {
  const now = new Date();
  return {
    ...GATE_DEFAULTS,
    id: ARCHITECT_GATE_ID,
    userId,
    name: ARCHITECT_GATE_NAME,
    taskType: 'chat',
    model,
    temperature: 0,
    maxTokens: 1000,
    taskAnalysis: null,
    responseFormatSchema: null,
    spendingLimit: null,
    sessionSpendingLimit: null,
    endUserSpendingLimit: null,
    endUserSpendingLimitPeriod: 'monthly',
    visibleTools: null,
    spendingCurrent: new Prisma.Decimal(0),
    spendingPeriodStart: now,
    spendingStatus: 'active',
    spendingAlertedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

export type ModelReader = { dataPlane: DataPlane; model: string };

/**
 * The configured model's reading, the rules' when it fails (with the reason). The caller's own
 * task type and subtype still win over the model's.
 */
export async function readDescription(
  userId: string,
  description: string,
  given: { taskType?: TaskType | undefined; taskSubtype?: TaskSubtype | null | undefined },
  reader: ModelReader | null,
): Promise<DescriptionReading> {
  const rules = readByRules(description, given);
  if (!reader) return rules;
  const request: ChatRequest = {
    messages: [
      { role: 'system', content: READING_PROMPT },
      { role: 'user', content: description },
    ],
    stream: false,
    responseFormat: {
      type: 'json_schema',
      json_schema: {
        name: 'gate_reading',
        schema: READING_SCHEMA as unknown as Record<string, unknown>,
        strict: true,
      },
    },
  };
  try {
    const outcome = await reader.dataPlane.chat(
      { userId, endpoint: 'architect' },
      architectGate(userId, reader.model),
      () => request,
    );
    // A model that does not keep to the schema is caught here, and the rules read instead.
    const parsed = READING.safeParse(JSON.parse(outcome.completion.content ?? ''));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(
        `its answer does not match the schema: ${issue?.path.join('.') || 'answer'} ${issue?.message ?? ''}`,
      );
    }
    const read = parsed.data;
    const taskType = given.taskType ?? read.taskType;
    return {
      taskType,
      taskSubtype:
        // A stored gate's null subtype is "not set": the model's reading may fill it.
        given.taskSubtype ?? (taskType === 'chat' ? read.taskSubtype : null),
      capabilities: taskType === 'chat' ? [...new Set(read.capabilities)] : [],
      enhancedDescription: read.enhancedDescription.trim().slice(0, 2000) || rules.enhancedDescription,
      readBy: 'model',
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      ...rules,
      modelProblem: `${reader.model} could not read the description (${reason}); the rules read it`,
    };
  }
}

/** What a save may carry that decides whether the description is enhanced. */
type DescribedGate = {
  description?: string | null | undefined;
  autoEnhanceDescription?: boolean | undefined;
  taskType?: string | undefined;
  taskSubtype?: string | null | undefined;
};

/**
 * autoEnhanceDescription: a gate saved with it on has its description replaced by the enhanced
 * one, when the description changed in this save or the toggle was turned on by it. Called
 * before the save's transaction (the model's reading may take a while). An enhancement past the
 * description's limit leaves the description as written.
 */
export async function withEnhancedDescription<T extends DescribedGate>(
  userId: string,
  input: T,
  existing: DescribedGate | null,
  reader: ModelReader | null,
  maxLength: number,
): Promise<T> {
  const on = input.autoEnhanceDescription ?? existing?.autoEnhanceDescription ?? false;
  const description = input.description !== undefined ? input.description : (existing?.description ?? null);
  const changed = input.description !== undefined && input.description !== (existing?.description ?? null);
  const turnedOn = input.autoEnhanceDescription === true && existing?.autoEnhanceDescription !== true;
  if (!on || !description?.trim() || !(changed || turnedOn)) return input;
  const reading = await readDescription(
    userId,
    description,
    {
      taskType: (input.taskType ?? existing?.taskType) as TaskType | undefined,
      taskSubtype: (input.taskSubtype !== undefined ? input.taskSubtype : existing?.taskSubtype) as
        | TaskSubtype
        | null
        | undefined,
    },
    reader,
  );
  const enhanced = reading.enhancedDescription;
  if (enhanced.length > maxLength || enhanced === description) return input;
  return { ...input, description: enhanced };
}
