/**
 * The Try it tab: requests of the gate's task type through the gate, from the dashboard, with
 * its answer shown as what it is (text, a vector's first values, an image, a player, a
 * transcript, moderation flags, OCR pages) and what it cost. It calls the same native endpoint an
 * application would (`TASK_ENDPOINTS`), signed in by the session cookie and its CSRF header, so
 * the request is routed, limited and logged like any other. A chat keeps its conversation: each
 * answer is appended and the next turn sends it all, with the temperature and max tokens given.
 * Opened from a log entry's Replay (`?replay=<entry id>`), it loads that entry's request and
 * sends it with x-gatehouse-replay-of, so the new entry links back to the first.
 */
import { CSRF_COOKIE, CSRF_HEADER } from '@gatehouse/rules/csrf';
import { TASK_ENDPOINTS, type TaskType } from '@gatehouse/rules/gate';
import { type FormEvent, useEffect, useState } from 'react';
import { useQuery } from 'urql';
import { Link, useSearch } from 'wouter';
import { readCookie } from '../client.tsx';
import { graphql } from '../graphql.ts';
import { replayRequestOf } from '../logs/logEntryJson.ts';
import { ShapeChangedNote } from '../logs/ShapeChangedNote.tsx';

const ReplayQuery = graphql(`
  query ReplayRequest($id: ID!) {
    log(id: $id) {
      id
      gateId
      replayRequest
    }
  }
`);

/** One turn of a chat in Try it, in the native chat shape (a replayed request may hold any role). */
type Turn = { role: string; content: unknown; tool_calls?: unknown; tool_call_id?: string };

/** What the chat's parameters fields hold: empty is the gate's own. */
type ChatParams = { temperature: string; maxTokens: string };

const chatParamsOf = (p: ChatParams) => ({
  ...(p.temperature.trim() !== '' && { temperature: Number(p.temperature) }),
  ...(p.maxTokens.trim() !== '' && { maxTokens: Number(p.maxTokens) }),
});

type Answer = Record<string, unknown> & { id?: string; model?: string; costUsd?: number; latencyMs?: number };
type Outcome =
  | { ok: true; answer: Answer; notes: AnswerNotes; replayOf: string | null }
  | { ok: false; message: string }
  | null;

/** What the gateway said beside the answer, in its x-gatehouse-* headers. */
type AnswerNotes = {
  /** Overrides the gate does not allow, ignored. */
  ignored: string | null;
  /** A fallback answered in another shape than the primary gives: "dimensions 1536 -> 3072". */
  shapeChanged: string | null;
  /** The gate's alert-only spending limit is reached: the request passed, and said so. */
  overLimit: boolean;
};

const notesOf = (headers: Headers): AnswerNotes => ({
  ignored: headers.get('x-gatehouse-ignored-overrides'),
  shapeChanged: headers.get('x-gatehouse-shape-changed'),
  overLimit: headers.has('x-gatehouse-spending-warning'),
});

/** What the form collects, as the endpoint's `data`. */
async function dataFor(
  taskType: TaskType,
  text: string,
  file: File | null,
): Promise<Record<string, unknown>> {
  const fileData = async () => {
    if (!file) throw new Error('Choose a file first.');
    const bytes = new Uint8Array(await file.arrayBuffer());
    let binary = '';
    for (let i = 0; i < bytes.length; i += 0x8000)
      binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    // A type the browser cannot tell is left out: the gateway reads the file's own bytes.
    return { base64: btoa(binary), ...(file.type && { mimeType: file.type }), name: file.name };
  };
  switch (taskType) {
    case 'chat':
      return { messages: [{ role: 'user', content: text }] };
    case 'embeddings':
    case 'moderation':
    case 'tts':
      return { input: text };
    case 'image':
    case 'video':
      return { prompt: text };
    case 'stt':
    case 'audio': {
      const f = await fileData();
      return { audio: f.base64, ...(f.mimeType && { mimeType: f.mimeType }), filename: f.name };
    }
    case 'ocr': {
      const f = await fileData();
      return { base64: f.base64, ...(f.mimeType && { mimeType: f.mimeType }) };
    }
  }
}

const needsFile = (t: TaskType) => t === 'stt' || t === 'audio' || t === 'ocr';

const PLACEHOLDER: Record<TaskType, string> = {
  chat: 'Ask something…',
  embeddings: 'A text to embed',
  moderation: 'A text to check',
  tts: 'A sentence to speak',
  image: 'Describe the image',
  video: 'Describe the video',
  stt: '',
  audio: '',
  ocr: '',
};

/** The entry a Replay link names (`?replay=<id>`), and its request once read; null when none is named. */
function useReplay(gateId: string) {
  const id = new URLSearchParams(useSearch()).get('replay');
  const [{ data, fetching }] = useQuery({ query: ReplayQuery, variables: { id: id ?? '' }, pause: !id });
  if (!id) return null;
  const entry = data?.log;
  const request = entry && entry.gateId === gateId ? replayRequestOf(entry.replayRequest) : null;
  return { id, fetching, request };
}

export function TryIt({ gateId, taskType }: { gateId: string; taskType: TaskType }) {
  const endpoint = TASK_ENDPOINTS[taskType];
  const [text, setText] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [sending, setSending] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [params, setParams] = useState<ChatParams>({ temperature: '', maxTokens: '' });
  const replay = useReplay(gateId);
  /** The entry the next Send replays: set when its request is loaded, cleared once sent. */
  const [replaying, setReplaying] = useState<string | null>(null);
  const replayData = replay?.request?.data;
  useEffect(() => {
    if (!replay?.id || !replayData) return;
    setReplaying(replay.id);
    setOutcome(null);
    if (Array.isArray(replayData.messages)) {
      setTurns(replayData.messages as Turn[]);
      setText('');
      setParams({
        temperature: typeof replayData.temperature === 'number' ? String(replayData.temperature) : '',
        maxTokens: typeof replayData.maxTokens === 'number' ? String(replayData.maxTokens) : '',
      });
    } else {
      const input = replayData.prompt ?? replayData.input;
      setText(Array.isArray(input) ? input.join('\n') : String(input ?? ''));
    }
  }, [replay?.id, replayData]);
  const chat = taskType === 'chat';

  if (!endpoint) {
    return (
      <section className="try-it">
        <h2>Try it</h2>
        <p className="muted">No endpoint calls {taskType} gates yet, so there is nothing to try.</p>
      </section>
    );
  }

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setSending(true);
    setOutcome(null);
    try {
      // A chat sends the whole conversation, the new turn last; a replay loaded may need none.
      const asked = chat && text.trim() !== '' ? [...turns, { role: 'user', content: text }] : turns;
      if (chat && asked.length === 0) throw new Error('Write a message first.');
      const data = chat ? { messages: asked, ...chatParamsOf(params) } : await dataFor(taskType, text, file);
      const csrf = readCookie(CSRF_COOKIE);
      const res = await fetch(endpoint, {
        method: 'POST',
        credentials: 'same-origin',
        headers: {
          'content-type': 'application/json',
          ...(csrf && { [CSRF_HEADER]: csrf }),
          ...(replaying && { 'x-gatehouse-replay-of': replaying }),
        },
        body: JSON.stringify({ gateId, data }),
      });
      const body = (await res.json().catch(() => null)) as (Answer & { error?: { message?: string } }) | null;
      if (!res.ok || !body) {
        setOutcome({ ok: false, message: body?.error?.message ?? `The gateway answered ${res.status}.` });
        return;
      }
      setOutcome({ ok: true, answer: body, notes: notesOf(res.headers), replayOf: replaying });
      setReplaying(null);
      if (chat) {
        setTurns([...asked, { role: 'assistant', content: body.content ?? null }]);
        setText('');
      }
    } catch (error) {
      setOutcome({ ok: false, message: (error as Error).message });
    } finally {
      setSending(false);
    }
  };

  return (
    <section className="try-it">
      <h2>Try it</h2>
      <p className="muted">
        Sends one request through this gate to <code>POST {endpoint}</code>: it is routed, counted against the
        spending limit and logged like any other.
      </p>
      {replay?.fetching && <p className="muted">Loading the request to replay…</p>}
      {replay && !replay.fetching && !replay.request && (
        <p role="alert" className="error">
          Entry {replay.id} cannot be replayed here: it is not this gate’s, or its request was not kept (a
          file).
        </p>
      )}
      {replaying && (
        <div className="banner info" role="status">
          Replaying <Link href={`/logs/${replaying}`}>entry {replaying.slice(0, 8)}</Link>: its request is
          loaded; Send puts it through this gate again as a new entry linked to it.
        </div>
      )}
      {chat && turns.length > 0 && <Conversation turns={turns} onClear={() => setTurns([])} />}
      <form onSubmit={onSubmit}>
        {needsFile(taskType) ? (
          <label>
            {taskType === 'ocr' ? 'An image or PDF' : 'An audio file'}
            <input
              type="file"
              accept={taskType === 'ocr' ? 'image/*,application/pdf' : 'audio/*'}
              onChange={(e) => setFile(e.target.files?.[0] ?? null)}
            />
          </label>
        ) : (
          <label>
            Input
            <textarea
              value={text}
              placeholder={chat && turns.length > 0 ? 'Your next message…' : PLACEHOLDER[taskType]}
              onChange={(e) => setText(e.target.value)}
              rows={3}
            />
          </label>
        )}
        {chat && (
          <fieldset className="try-it-params">
            <legend>Parameters (empty: the gate’s own)</legend>
            <label>
              Temperature (this request)
              <input
                type="number"
                min={0}
                max={2}
                step={0.1}
                value={params.temperature}
                onChange={(e) => setParams({ ...params, temperature: e.target.value })}
              />
            </label>
            <label>
              Max tokens (this request)
              <input
                type="number"
                min={1}
                step={1}
                value={params.maxTokens}
                onChange={(e) => setParams({ ...params, maxTokens: e.target.value })}
              />
            </label>
          </fieldset>
        )}
        <button type="submit" className="button primary" disabled={sending}>
          {sending ? 'Sending…' : 'Send'}
        </button>
      </form>
      {outcome && !outcome.ok && (
        <p role="alert" className="error">
          {outcome.message}
        </p>
      )}
      {outcome?.ok && (
        <TryItAnswer
          taskType={taskType}
          answer={outcome.answer}
          notes={outcome.notes}
          replayOf={outcome.replayOf}
        />
      )}
    </section>
  );
}

/** The chat so far, each turn with its role; the next Send continues it. */
function Conversation({ turns, onClear }: { turns: Turn[]; onClear: () => void }) {
  return (
    <section className="try-it-conversation" aria-label="Conversation">
      <ol className="conversation">
        {turns.map((turn, i) => (
          // Turns have no id: their order is the conversation.
          // biome-ignore lint/suspicious/noArrayIndexKey: the position is the turn's identity
          <li key={i} className={`message message-${turn.role}`} aria-label={turn.role}>
            <div className="message-role">{turn.role}</div>
            <pre className="plain-text">
              {typeof turn.content === 'string'
                ? turn.content
                : JSON.stringify(turn.content ?? turn.tool_calls)}
            </pre>
          </li>
        ))}
      </ol>
      <button type="button" className="button small subtle" onClick={onClear}>
        New conversation
      </button>
    </section>
  );
}

type Media = { base64?: string; url?: string; mimeType?: string };
const srcOf = (m: Media, fallbackType: string) =>
  m.url ?? `data:${m.mimeType ?? fallbackType};base64,${m.base64 ?? ''}`;

function TryItAnswer({
  taskType,
  answer,
  notes,
  replayOf,
}: {
  taskType: TaskType;
  answer: Answer;
  notes: AnswerNotes;
  replayOf: string | null;
}) {
  return (
    <section className="try-it-answer" aria-label="Answer">
      <p className="muted">
        {answer.model} · ${(answer.costUsd ?? 0).toFixed(6)} · {answer.latencyMs} ms
        {answer.id && (
          <>
            {' · '}
            <Link href={`/logs/${answer.id}`}>{replayOf ? 'the replay’s log entry' : 'its log entry'}</Link>
          </>
        )}
      </p>
      {notes.ignored && <p className="muted small">The gate does not allow overriding: {notes.ignored}.</p>}
      {notes.shapeChanged && <ShapeChangedNote note={notes.shapeChanged} />}
      {notes.overLimit && (
        <p className="banner warning" role="note" aria-label="Over the spending limit">
          This gate is over its spending limit. It only alerts, so the request passed; applications get the
          answer with the x-gatehouse-spending-warning header. The Spending Limits tab shows the limit.
        </p>
      )}
      {/* A chat's answer is the conversation's last turn, shown above. */}
      {taskType !== 'chat' && <AnswerBody taskType={taskType} answer={answer} />}
    </section>
  );
}

function AnswerBody({ taskType, answer }: { taskType: TaskType; answer: Answer }) {
  switch (taskType) {
    case 'chat':
      return <p className="try-it-text">{String(answer.content ?? '')}</p>;
    case 'embeddings': {
      const vectors = (answer.embeddings ?? []) as number[][];
      const first = vectors[0] ?? [];
      return (
        <p>
          {vectors.length} vector{vectors.length === 1 ? '' : 's'} of {first.length} dimensions; the first
          values:{' '}
          <code>
            [
            {first
              .slice(0, 8)
              .map((v) => v.toFixed(4))
              .join(', ')}
            , …]
          </code>
        </p>
      );
    }
    case 'image':
      return (
        <div className="try-it-images">
          {((answer.images ?? []) as Media[]).map((image, i) => (
            <img
              key={srcOf(image, 'image/png').slice(-32) + String(i)}
              src={srcOf(image, 'image/png')}
              alt={`What the model made, ${i + 1}`}
            />
          ))}
        </div>
      );
    case 'tts': {
      const audio = (answer.audio ?? {}) as Media & { format?: string; duration?: number };
      return (
        <div>
          {/* biome-ignore lint/a11y/useMediaCaption: generated speech has no captions; its text is the input above */}
          <audio
            controls
            src={srcOf(audio, `audio/${audio.format ?? 'wav'}`)}
            aria-label="Generated speech"
          />
          {audio.duration !== undefined && <p className="muted">{audio.duration.toFixed(2)} s</p>}
        </div>
      );
    }
    case 'stt':
    case 'audio':
      return <p className="try-it-text">{String(answer.text ?? '')}</p>;
    case 'moderation': {
      const results = (answer.results ?? []) as { flagged: boolean; categories: Record<string, boolean> }[];
      return (
        <ul>
          {results.map((r, i) => (
            // The results follow the inputs, one each, in order: the position is their identity.
            // biome-ignore lint/suspicious/noArrayIndexKey: see above
            <li key={i}>
              {r.flagged
                ? `Flagged: ${Object.entries(r.categories ?? {})
                    .filter(([, on]) => on)
                    .map(([name]) => name)
                    .join(', ')}`
                : 'Not flagged'}
            </li>
          ))}
        </ul>
      );
    }
    case 'ocr': {
      const pages = ((answer.ocr as { pages?: { index: number; markdown: string }[] } | undefined)?.pages ??
        []) as { index: number; markdown: string }[];
      return (
        <div>
          {pages.map((p) => (
            <pre key={p.index} className="try-it-text">
              {p.markdown}
            </pre>
          ))}
        </div>
      );
    }
    case 'video':
      return null;
  }
}
