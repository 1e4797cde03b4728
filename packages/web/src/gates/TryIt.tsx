/**
 * The Try it tab: one request of the gate's task type through the gate, from the dashboard, with
 * its answer shown as what it is (text, a vector's first values, an image, a player, a
 * transcript, moderation flags, OCR pages) and what it cost. It calls the same native endpoint an
 * application would (`TASK_ENDPOINTS`), signed in by the session cookie and its CSRF header, so
 * the request is routed, limited and logged like any other.
 */
import { CSRF_COOKIE, CSRF_HEADER } from '@gatehouse/rules/csrf';
import { TASK_ENDPOINTS, type TaskType } from '@gatehouse/rules/gate';
import { type FormEvent, useState } from 'react';
import { readCookie } from '../client.tsx';

type Answer = Record<string, unknown> & { id?: string; model?: string; costUsd?: number; latencyMs?: number };
type Outcome = { ok: true; answer: Answer } | { ok: false; message: string } | null;

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

export function TryIt({ gateId, taskType }: { gateId: string; taskType: TaskType }) {
  const endpoint = TASK_ENDPOINTS[taskType];
  const [text, setText] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [sending, setSending] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);

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
      const data = await dataFor(taskType, text, file);
      const csrf = readCookie(CSRF_COOKIE);
      const res = await fetch(endpoint, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json', ...(csrf && { [CSRF_HEADER]: csrf }) },
        body: JSON.stringify({ gateId, data }),
      });
      const body = (await res.json().catch(() => null)) as (Answer & { error?: { message?: string } }) | null;
      if (!res.ok || !body) {
        setOutcome({ ok: false, message: body?.error?.message ?? `The gateway answered ${res.status}.` });
      } else setOutcome({ ok: true, answer: body });
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
              placeholder={PLACEHOLDER[taskType]}
              onChange={(e) => setText(e.target.value)}
              rows={3}
            />
          </label>
        )}
        <button type="submit" className="primary" disabled={sending}>
          {sending ? 'Sending…' : 'Send'}
        </button>
      </form>
      {outcome && !outcome.ok && (
        <p role="alert" className="error">
          {outcome.message}
        </p>
      )}
      {outcome?.ok && <TryItAnswer taskType={taskType} answer={outcome.answer} />}
    </section>
  );
}

type Media = { base64?: string; url?: string; mimeType?: string };
const srcOf = (m: Media, fallbackType: string) =>
  m.url ?? `data:${m.mimeType ?? fallbackType};base64,${m.base64 ?? ''}`;

function TryItAnswer({ taskType, answer }: { taskType: TaskType; answer: Answer }) {
  return (
    <section className="try-it-answer" aria-label="Answer">
      <p className="muted">
        {answer.model} · ${(answer.costUsd ?? 0).toFixed(6)} · {answer.latencyMs} ms
      </p>
      <AnswerBody taskType={taskType} answer={answer} />
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
