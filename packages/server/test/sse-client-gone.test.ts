/**
 * A streamed chat whose client left before the stream began (during the body's read or the
 * gate's lookup, after the route took its signal): the run starts already cancelled, so no
 * provider stream runs on for nobody and is billed in full.
 */
import { describe, expect, it } from 'vitest';
import type { ChatHooks } from '../src/dataplane/chat.ts';
import { type SseFormat, streamChat } from '../src/http/sse.ts';

const format: SseFormat = { delta: () => [], end: () => [], error: () => ({ error: 'cancelled' }) };

/** What the run saw of its signal as it started. */
async function startedCancelled(client: AbortSignal): Promise<boolean | undefined> {
  let seen: boolean | undefined;
  const run = (hooks: ChatHooks) => {
    seen = hooks.signal?.aborted;
    return Promise.reject(new Error('the provider call was cancelled'));
  };
  await streamChat(run, format, client).catch(() => {});
  return seen;
}

describe('a streamed chat', () => {
  it('starts cancelled when its client has already gone', async () => {
    expect(await startedCancelled(AbortSignal.abort(new Error('the client went away')))).toBe(true);
  });

  it('starts uncancelled while its client is there', async () => {
    expect(await startedCancelled(new AbortController().signal)).toBe(false);
  });
});
