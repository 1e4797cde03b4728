import { type FragmentOf, readFragment } from 'gql.tada';
import type { ReactNode } from 'react';
import { Link } from 'wouter';
import { sessionHref } from '../gates/sessionStatus.tsx';
import { graphql, type ResultOf } from '../graphql.ts';
import { TableWrap } from '../ui/TableWrap.tsx';
import { CopyButton, copyText } from './CopyButton.tsx';
import { formatCount, formatLogTime, formatMs, formatUsd } from './format.ts';
import { ImagePreview } from './ImagePreview.tsx';
import { type FoundImage, findImages } from './images.ts';
import { JsonViewer } from './JsonViewer.tsx';
import { StatusBadge } from './LogsTable.tsx';
import {
  type AttemptView,
  attemptsOf,
  billedOf,
  curlOf,
  fellBack,
  type MessageView,
  messagesOf,
  replayRequestOf,
  shapeOf,
  type ToolCallView,
  type ToolResultView,
  toolCallsOf,
  toolResultsOf,
} from './logEntryJson.ts';
import { ShapeChangedNote } from './ShapeChangedNote.tsx';

export const LogEntryFragment = graphql(`
  fragment LogEntryDetail on LogEntry {
    id
    gateId
    gateName
    endpoint
    modelRequested
    modelUsed
    promptTokens
    completionTokens
    totalTokens
    tokensEstimated
    costUsd
    latencyMs
    success
    statusCode
    errorCode
    errorMessage
    sessionId
    apiKeyId
    apiKeyName
    endUser
    inferredAction
    toolCalls
    toolResults
    ignoredOverrides
    spendingWarning
    stream
    createdAt
    attempts
    metadata
    providerRequest
    providerResponse
    clientRequest
    replayOf
    replays
    conversation
    replayRequest
    media {
      index
      mimeType
      bytes
      url
    }
  }
`);

type LogEntry = ResultOf<typeof LogEntryFragment>;

/** Everything logged about one request: what happened, each model tried, and both payloads. */
export function LogEntryView({ entry: data }: { entry: FragmentOf<typeof LogEntryFragment> }) {
  const entry = readFragment(LogEntryFragment, data);
  const toolCalls = toolCallsOf(entry.toolCalls);
  const toolResults = toolResultsOf(entry.toolResults);
  // Stored media first (the log keeps a note in their place); then any image the JSON holds.
  const stored: FoundImage[] = entry.media
    .filter((m) => m.mimeType.startsWith('image/'))
    .map((m) => ({ src: m.url, mediaType: m.mimeType, path: mediaLabel(m), stored: true }));
  const audio = entry.media.filter((m) => m.mimeType.startsWith('audio/'));
  const videos = entry.media.filter((m) => m.mimeType.startsWith('video/'));
  const images = [...stored, ...findImages(entry.providerResponse)];

  return (
    <div className="entry">
      <EntryOutcome entry={entry} />
      <EntryActions entry={entry} />
      <EntryFacts entry={entry} />
      <AttemptsSection attempts={attemptsOf(entry.attempts)} />
      <ConversationSection entry={entry} />
      {images.length > 0 && (
        <Section title={images.length === 1 ? 'Image' : `Images (${images.length})`}>
          <ImagePreview entryId={entry.id} images={images} />
        </Section>
      )}
      {audio.length > 0 && <AudioSection entryId={entry.id} audio={audio} />}
      {videos.length > 0 && <VideoSection entryId={entry.id} videos={videos} />}
      {toolCalls && toolCalls.length > 0 && <ToolCallsSection toolCalls={toolCalls} />}
      {toolResults && toolResults.length > 0 && <ToolResultsSection toolResults={toolResults} />}
      <PayloadSections entry={entry} />
    </div>
  );
}

type StoredMedia = LogEntry['media'][number];

const mediaLabel = (m: StoredMedia) => `media ${m.index} · ${m.mimeType} · ${formatCount(m.bytes)} bytes`;

const AUDIO_EXTENSIONS: Record<string, string> = {
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/ogg': 'ogg',
  'audio/opus': 'opus',
  'audio/aac': 'aac',
  'audio/flac': 'flac',
};

/** The speech an answer carried, stored beside the entry: a player and a download each. */
function AudioSection({ entryId, audio }: { entryId: string; audio: StoredMedia[] }) {
  return (
    <Section title={audio.length === 1 ? 'Audio' : `Audio (${audio.length})`}>
      {audio.map((m) => (
        <figure key={m.index} className="audio-preview">
          {/* biome-ignore lint/a11y/useMediaCaption: generated speech has no captions to offer */}
          <audio controls preload="metadata" src={m.url} aria-label={`Audio ${m.index + 1}`} />
          <figcaption>
            <span className="mono muted small">{mediaLabel(m)}</span>{' '}
            <a
              className="button small"
              href={m.url}
              download={`gatehouse-${entryId.slice(0, 8)}-${m.index + 1}.${AUDIO_EXTENSIONS[m.mimeType] ?? 'bin'}`}
            >
              Download
            </a>
          </figcaption>
        </figure>
      ))}
    </Section>
  );
}

const VIDEO_EXTENSIONS: Record<string, string> = {
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'video/quicktime': 'mov',
};

/** The video an answer carried (an animated GIF shows among the images): a player and a download. */
function VideoSection({ entryId, videos }: { entryId: string; videos: StoredMedia[] }) {
  return (
    <Section title={videos.length === 1 ? 'Video' : `Videos (${videos.length})`}>
      {videos.map((m) => (
        <figure key={m.index} className="video-preview">
          {/* biome-ignore lint/a11y/useMediaCaption: generated video has no captions to offer */}
          <video controls preload="metadata" src={m.url} aria-label={`Video ${m.index + 1}`} />
          <figcaption>
            <span className="mono muted small">{mediaLabel(m)}</span>{' '}
            <a
              className="button small"
              href={m.url}
              download={`gatehouse-${entryId.slice(0, 8)}-${m.index + 1}.${VIDEO_EXTENSIONS[m.mimeType] ?? 'bin'}`}
            >
              Download
            </a>
          </figcaption>
        </figure>
      ))}
    </Section>
  );
}

/** Success or the error, when, whether a fallback changed the answer's shape, and whether the gate's spending limit was reached. */
function EntryOutcome({ entry }: { entry: LogEntry }) {
  const shapeNote = shapeOf(attemptsOf(entry.attempts)).note;
  return (
    <>
      <div className="entry-status">
        <StatusBadge success={entry.success} statusCode={entry.statusCode} />
        <time dateTime={entry.createdAt} className="muted">
          {formatLogTime(entry.createdAt)}
        </time>
      </div>

      {!entry.success && (
        <div className="banner error entry-error" role="note" aria-label="Error">
          <div>
            <div className="strong">
              {entry.errorCode ?? 'error'} · HTTP {entry.statusCode}
            </div>
            <div className="entry-error-message">{entry.errorMessage ?? 'No message was recorded.'}</div>
          </div>
        </div>
      )}
      {shapeNote && <ShapeChangedNote note={shapeNote} />}
      {entry.spendingWarning && (
        <div className="banner warning">
          This request reached the gate’s spending limit. The gate only alerts, so it was still served.
        </div>
      )}
    </>
  );
}

/** Gate, models, tokens, cost, latency and the rest, one fact a line. */
function EntryFacts({ entry }: { entry: LogEntry }) {
  const billed = billedOf(attemptsOf(entry.attempts));
  const { dimensions } = shapeOf(attemptsOf(entry.attempts));
  return (
    <dl className="facts">
      <Fact term="Gate">
        {entry.gateId ? (
          <Link href={`/gates/${entry.gateId}`}>{entry.gateName ?? entry.gateId}</Link>
        ) : (
          (entry.gateName ?? <span className="muted">none</span>)
        )}
        {entry.gateId && <div className="mono muted small">{entry.gateId}</div>}
      </Fact>
      <Fact term="Model requested">
        <span className="mono">{entry.modelRequested ?? '—'}</span>
        {entry.ignoredOverrides.includes('model') && (
          <div className="muted small">Named by the client, answered by the gate’s model.</div>
        )}
      </Fact>
      <Fact term="Model used">
        <span className="mono">{entry.modelUsed ?? '—'}</span>
        {fellBack(attemptsOf(entry.attempts)) && <span className="badge info">fallback</span>}
      </Fact>
      {billed ? (
        <Fact term="Billed">{billed}</Fact>
      ) : (
        <Fact term="Tokens">
          {formatCount(entry.promptTokens)} input + {formatCount(entry.completionTokens)} output ={' '}
          {formatCount(entry.totalTokens)}
          {entry.tokensEstimated && (
            <span className="badge neutral" title="The provider reported no usage; Gatehouse estimated it">
              estimated
            </span>
          )}
        </Fact>
      )}
      {dimensions !== null && <Fact term="Dimensions">{formatCount(dimensions)}</Fact>}
      <Fact term="Cost">{formatUsd(entry.costUsd)}</Fact>
      <Fact term="Latency">{formatMs(entry.latencyMs)}</Fact>
      <Fact term="Endpoint">
        <span className="mono">{entry.endpoint}</span>
        {entry.stream && <span className="badge neutral">stream</span>}
      </Fact>
      <Fact term="API key">
        {entry.apiKeyId ? (
          <Link href="/api-keys">{entry.apiKeyName ?? entry.apiKeyId}</Link>
        ) : (
          <span className="muted">none (the dashboard)</span>
        )}
        {entry.apiKeyId && <div className="mono muted small">{entry.apiKeyId}</div>}
      </Fact>
      {entry.endUser && (
        <Fact term="End user">
          <span className="mono">{entry.endUser}</span>
        </Fact>
      )}
      {entry.sessionId && (
        <Fact term="Session">
          {entry.gateId ? (
            <Link href={sessionHref(entry.gateId, entry.sessionId)} className="mono">
              {entry.sessionId}
            </Link>
          ) : (
            <span className="mono">{entry.sessionId}</span>
          )}
        </Fact>
      )}
      {entry.inferredAction && <Fact term="Inferred action">{entry.inferredAction}</Fact>}
      {entry.replayOf && (
        <Fact term="Replay of">
          <Link href={`/logs/${entry.replayOf}`} className="mono">
            {entry.replayOf}
          </Link>
        </Fact>
      )}
      {entry.replays.length > 0 && (
        <Fact term={entry.replays.length === 1 ? 'Replayed as' : `Replayed as (${entry.replays.length})`}>
          {entry.replays.map((id) => (
            <div key={id}>
              <Link href={`/logs/${id}`} className="mono">
                {id}
              </Link>
            </div>
          ))}
        </Fact>
      )}
      {entry.ignoredOverrides.length > 0 && (
        <Fact term="Ignored overrides">
          <div className="tags">
            {entry.ignoredOverrides.map((name) => (
              <span key={name} className="tag mono">
                {name}
              </span>
            ))}
          </div>
          <div className="muted small">
            The request asked for these; the gate does not allow overriding them.
          </div>
        </Fact>
      )}
    </dl>
  );
}

/** Each model the gateway tried, in order, with how it went. */
function AttemptsSection({ attempts }: { attempts: AttemptView[] }) {
  return (
    <Section title={`Attempts (${attempts.length})`}>
      {attempts.length === 0 ? (
        <p className="muted">No model was called: the request stopped in the gateway.</p>
      ) : (
        <TableWrap label="Attempts">
          <table className="table compact attempts">
            <thead>
              <tr>
                <th>#</th>
                <th>Model</th>
                <th>Provider</th>
                <th>Status</th>
                <th>Error</th>
                <th className="numeric">Cost</th>
                <th className="numeric">Latency</th>
              </tr>
            </thead>
            <tbody>
              {attempts.map((attempt, index) => (
                // Attempts have no id: their order is what they are.
                // biome-ignore lint/suspicious/noArrayIndexKey: the position is the attempt's identity
                <tr key={index}>
                  <td data-label="#">{index + 1}</td>
                  <td data-label="Model" className="mono">
                    {attempt.model}
                  </td>
                  <td data-label="Provider">{attempt.provider}</td>
                  <td data-label="Status">
                    <span className={attempt.ok ? 'badge ok' : 'badge danger'}>
                      {attempt.ok ? 'ok' : 'failed'}
                      {attempt.status !== null && ` ${attempt.status}`}
                    </span>
                  </td>
                  <td data-label="Error" className="attempt-error">
                    {attempt.error ?? <span className="muted">—</span>}
                  </td>
                  <td data-label="Cost" className="numeric">
                    {attempt.costUsd === null ? '—' : formatUsd(attempt.costUsd)}
                    {attempt.costUpperBound && (
                      <div
                        className="badge warning"
                        title="The provider may have billed it in full: charged its worst case"
                      >
                        upper bound
                      </div>
                    )}
                  </td>
                  <td data-label="Latency" className="numeric">
                    {attempt.latencyMs === null ? '—' : formatMs(attempt.latencyMs)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </Section>
  );
}

/** Copy as curl, and Replay: the request sent through its gate again from Try it, as a new entry. */
function EntryActions({ entry }: { entry: LogEntry }) {
  const request = replayRequestOf(entry.replayRequest);
  if (!request || !entry.gateId) return null;
  const gateId = entry.gateId;
  return (
    <div className="entry-actions">
      <CopyButton label="Copy as curl" copy={copyText(curlOf(window.location.origin, gateId, request))} />
      <Link className="button small" href={`/gates/${gateId}?tab=try&replay=${entry.id}`}>
        Replay
      </Link>
    </div>
  );
}

/** A chat request as its messages, the answer last, beside the JSON they were read from. */
function ConversationSection({ entry }: { entry: LogEntry }) {
  const messages = messagesOf(entry.conversation);
  if (!messages || messages.length === 0) return null;
  return (
    <Section title="Conversation">
      <ol className="conversation">
        {messages.map((message, index) => (
          <Message
            // Messages have no id: their order is the conversation.
            // biome-ignore lint/suspicious/noArrayIndexKey: the position is the message's identity
            key={index}
            message={message}
            last={index === messages.length - 1 && !!entry.providerResponse}
          />
        ))}
      </ol>
    </Section>
  );
}

function Message({ message, last }: { message: MessageView; last: boolean }) {
  const label = message.role === 'tool' ? 'tool result' : message.role;
  return (
    <li className={`message message-${message.role}`} aria-label={last ? `${label} (the answer)` : label}>
      <div className="message-role">
        {label}
        {last && <span className="badge neutral">answer</span>}
        {message.toolCallId && <span className="muted small mono"> {message.toolCallId}</span>}
      </div>
      {message.text !== null && <pre className="plain-text">{message.text}</pre>}
      {message.toolCalls.map((call, index) => (
        <div key={call.id ?? index} className="tool-item">
          <div>
            calls <span className="strong mono">{call.name}</span>
            {call.id && <span className="muted small mono"> {call.id}</span>}
          </div>
          <JsonViewer value={call.arguments} label="Arguments" />
        </div>
      ))}
    </li>
  );
}

function ToolCallsSection({ toolCalls }: { toolCalls: ToolCallView[] }) {
  return (
    <Section title={`Tool calls (${toolCalls.length})`}>
      {toolCalls.map((call, index) => (
        <div key={call.id ?? index} className="tool-item">
          <div>
            <span className="strong mono">{call.name}</span>
            {call.id && <span className="muted small mono"> {call.id}</span>}
          </div>
          <JsonViewer value={call.arguments} label="Arguments" />
        </div>
      ))}
    </Section>
  );
}

function ToolResultsSection({ toolResults }: { toolResults: ToolResultView[] }) {
  return (
    <Section title={`Tool results (${toolResults.length})`}>
      {toolResults.map((result, index) => (
        <div key={result.toolCallId ?? index} className="tool-item">
          <div className="muted small">
            Result of <span className="mono">{result.toolCallId ?? 'an unnamed call'}</span>
          </div>
          {typeof result.content === 'string' ? (
            <pre className="plain-text">{result.content}</pre>
          ) : (
            <JsonViewer value={result.content} label="Content" />
          )}
        </div>
      ))}
    </Section>
  );
}

/**
 * What was sent to the provider, what it answered, and the request's metadata; for a request
 * refused before any provider call, what its client sent, which shows why.
 */
function PayloadSections({ entry }: { entry: LogEntry }) {
  return (
    <>
      {entry.clientRequest !== null && (
        <Section title="Client request">
          <JsonViewer value={entry.clientRequest} label="JSON the client sent" />
        </Section>
      )}
      <Section title="Request">
        {entry.providerRequest === null ? (
          <p className="muted">Nothing was sent to a provider.</p>
        ) : (
          <JsonViewer value={entry.providerRequest} label="JSON sent to the provider" />
        )}
      </Section>
      <Section title="Response">
        {entry.providerResponse === null ? (
          <p className="muted">No provider answer was recorded.</p>
        ) : (
          <JsonViewer value={entry.providerResponse} label="JSON the provider answered" />
        )}
      </Section>
      {entry.metadata !== null && (
        <Section title="Metadata">
          <JsonViewer value={entry.metadata} label="Metadata sent with the request" />
        </Section>
      )}
    </>
  );
}

function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div className="fact">
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="entry-section" aria-label={title}>
      <h3>{title}</h3>
      {children}
    </section>
  );
}
