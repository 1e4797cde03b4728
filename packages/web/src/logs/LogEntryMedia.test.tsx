import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { FragmentOf } from 'gql.tada';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ResultOf } from '../graphql.ts';
import { type LogEntryFragment, LogEntryView } from './LogEntryView.tsx';

type Entry = ResultOf<typeof LogEntryFragment>;

const ID = '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';

const base: Entry = {
  id: ID,
  gateId: null,
  gateName: 'Pictures',
  endpoint: '/v3/image',
  modelRequested: 'mock/image',
  modelUsed: 'mock/image',
  promptTokens: 0,
  completionTokens: 0,
  totalTokens: 0,
  tokensEstimated: false,
  costUsd: 0.01,
  latencyMs: 40,
  success: true,
  statusCode: 200,
  errorCode: null,
  errorMessage: null,
  sessionId: null,
  apiKeyId: null,
  apiKeyName: null,
  endUser: null,
  inferredAction: null,
  toolCalls: null,
  toolResults: null,
  ignoredOverrides: [],
  spendingWarning: false,
  stream: false,
  createdAt: '2026-11-23T12:00:00.000Z',
  attempts: [],
  metadata: null,
  providerRequest: { model: 'image', prompt: 'a lighthouse', count: 1 },
  // The log keeps a note where the image's base64 was.
  providerResponse: { created: 1, data: [{ b64_json: '[image/png, 2,048 bytes, stored as media 0]' }] },
  clientRequest: null,
  replayOf: null,
  replays: [],
  conversation: null,
  replayRequest: null,
  media: [{ index: 0, mimeType: 'image/png', bytes: 2048, url: `/v1/logs/${ID}/media/0` }],
};

const entry = (fields: Partial<Entry> = {}) =>
  ({ ...base, ...fields }) as unknown as FragmentOf<typeof LogEntryFragment>;

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('the log entry view, with stored media', () => {
  it('shows a stored image from its media URL, with Copy image and Download but no URL to copy', () => {
    render(<LogEntryView entry={entry()} />);
    const images = within(screen.getByRole('region', { name: 'Image' }));
    expect(images.getByRole('img').getAttribute('src')).toBe(`/v1/logs/${ID}/media/0`);
    expect(images.getByText('media 0 · image/png · 2,048 bytes')).toBeTruthy();
    expect(images.getByRole('button', { name: 'Copy image' })).toBeTruthy();
    expect(images.getByRole('button', { name: 'Download' })).toBeTruthy();
    expect(images.queryByRole('button', { name: 'Copy URL' })).toBeNull();
    // The note in the JSON is not taken for an image of its own.
    expect(images.getAllByRole('img')).toHaveLength(1);
  });

  it('copies the stored bytes to the clipboard as a PNG, and downloads the same bytes', async () => {
    const png = new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' });
    const fetched: string[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string) => {
        fetched.push(url);
        return new Response(png);
      }),
    );
    const written: Record<string, Blob | Promise<Blob>>[] = [];
    vi.stubGlobal(
      'ClipboardItem',
      class {
        constructor(readonly items: Record<string, Blob | Promise<Blob>>) {
          written.push(items);
        }
      },
    );
    // user-event puts a clipboard of its own in place: ours goes in after it.
    const user = userEvent.setup();
    const write = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { value: { write }, configurable: true });
    const objectUrls: Blob[] = [];
    URL.createObjectURL = vi.fn((blob: Blob) => {
      objectUrls.push(blob);
      return 'blob:stored-image';
    });
    URL.revokeObjectURL = vi.fn();
    const clicked: { href: string; download: string }[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push({ href: this.href, download: this.download });
    });

    render(<LogEntryView entry={entry()} />);
    await user.click(screen.getByRole('button', { name: 'Copy image' }));
    expect(await screen.findByRole('button', { name: 'Copied' })).toBeTruthy();
    expect(write).toHaveBeenCalledTimes(1);
    const copied = await written[0]?.['image/png'];
    expect(copied?.type).toBe('image/png');
    expect(new Uint8Array(await (copied as Blob).arrayBuffer())).toEqual(
      new Uint8Array([0x89, 0x50, 0x4e, 0x47]),
    );

    await user.click(screen.getByRole('button', { name: 'Download' }));
    await vi.waitFor(() => expect(clicked).toHaveLength(1));
    expect(clicked[0]).toEqual({ href: 'blob:stored-image', download: `gatehouse-${ID.slice(0, 8)}-1.png` });
    expect(fetched).toEqual([`/v1/logs/${ID}/media/0`, `/v1/logs/${ID}/media/0`]);
    expect(objectUrls[0]?.type).toBe('image/png');
  });

  it('plays stored speech in an audio player, with a download of its bytes', () => {
    render(
      <LogEntryView
        entry={entry({
          endpoint: '/v3/tts',
          providerResponse: { audio: '[audio/wav, 9,644 bytes, stored as media 0]' },
          media: [{ index: 0, mimeType: 'audio/wav', bytes: 9644, url: `/v1/logs/${ID}/media/0` }],
        })}
      />,
    );
    const audio = within(screen.getByRole('region', { name: 'Audio' }));
    const player = screen.getByLabelText('Audio 1') as HTMLAudioElement;
    expect(player.tagName).toBe('AUDIO');
    expect(player.controls).toBe(true);
    expect(player.getAttribute('src')).toBe(`/v1/logs/${ID}/media/0`);
    const download = audio.getByRole('link', { name: 'Download' });
    expect(download.getAttribute('href')).toBe(`/v1/logs/${ID}/media/0`);
    expect(download.getAttribute('download')).toBe(`gatehouse-${ID.slice(0, 8)}-1.wav`);
    expect(screen.queryByRole('region', { name: /Image/ })).toBeNull();
  });

  it('shows nothing new for an entry without media (embeddings)', () => {
    render(
      <LogEntryView
        entry={entry({ endpoint: '/v3/embeddings', providerResponse: { data: [] }, media: [] })}
      />,
    );
    expect(screen.queryByRole('region', { name: /Image|Audio/ })).toBeNull();
  });

  it('plays a stored video, with a download of the same file', () => {
    render(
      <LogEntryView
        entry={entry({
          endpoint: '/v3/video',
          providerResponse: { id: 'video_1', status: 'completed' },
          media: [{ index: 0, mimeType: 'video/mp4', bytes: 4096, url: `/v1/logs/${ID}/media/0` }],
        })}
      />,
    );
    const video = within(screen.getByRole('region', { name: 'Video' }));
    expect(video.getByLabelText('Video 1').getAttribute('src')).toBe(`/v1/logs/${ID}/media/0`);
    expect(video.getByRole('link', { name: 'Download' }).getAttribute('download')).toMatch(/\.mp4$/);
    expect(screen.queryByRole('region', { name: 'Image' })).toBeNull();
  });
});
