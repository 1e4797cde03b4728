/**
 * OCR on each provider's wire: Mistral's `/v1/ocr` (a document or an image by URL, inline files
 * as data URLs), and the mock's pages derived from the input.
 */
import { createHash } from 'node:crypto';
import { postJson } from '../http.ts';
import { mockMisbehaviour } from '../mock.ts';
import type { ProviderConnection } from '../registry.ts';
import { ProviderError, withWireRequest } from '../types.ts';
import { bearer, openAIPath, unsupported } from './common.ts';

/** What is read: a document or an image by URL, or a file sent inline. */
export type OcrSource =
  | { kind: 'documentUrl'; url: string }
  | { kind: 'imageUrl'; url: string }
  | { kind: 'inline'; data: Buffer; mimeType: string };

/** `pages`: the pages to read, numbered from 0; all of them when absent. */
export type OcrParams = { source: OcrSource; pages?: number[] };

export type OcrPage = { index: number; markdown: string };

export type OcrAnswer = {
  pages: OcrPage[];
  /** The pages billed: as the provider reported them, else the pages it sent. */
  pagesProcessed: number;
  providerRequest: unknown;
  providerResponse: unknown;
};

export const isImage = (mimeType: string) => mimeType.startsWith('image/');

/**
 * A PDF's pages, counted as its page objects (`/Type /Page`, not `/Pages`) in the file's bytes:
 * null where they cannot all be seen (compressed object streams hide them) or none is found.
 * Objects an incremental update replaced are counted twice: an upper bound, never fewer.
 */
export function pdfPageObjects(data: Buffer): number | null {
  const text = data.toString('latin1');
  if (!text.startsWith('%PDF') || /\/Type\s*\/ObjStm\b/.test(text)) return null;
  const count = text.match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length ?? 0;
  return count > 0 ? count : null;
}

/** The document as Mistral takes it, and as the log keeps it (an inline file as a note). */
function mistralDocument(source: OcrSource, forLog: boolean) {
  switch (source.kind) {
    case 'documentUrl':
      return { type: 'document_url', document_url: source.url };
    case 'imageUrl':
      return { type: 'image_url', image_url: source.url };
    case 'inline': {
      const url = forLog
        ? `[${source.mimeType}, ${source.data.length} bytes]`
        : `data:${source.mimeType};base64,${source.data.toString('base64')}`;
      return isImage(source.mimeType)
        ? { type: 'image_url', image_url: url }
        : { type: 'document_url', document_url: url };
    }
  }
}

type MistralOcr = {
  pages?: { index?: unknown; markdown?: unknown }[];
  usage_info?: { pages_processed?: unknown };
};

async function mistralOcr(
  conn: ProviderConnection,
  model: string,
  params: OcrParams,
  signal: AbortSignal,
): Promise<OcrAnswer> {
  const asked = params.pages && { pages: params.pages };
  const body = { model, document: mistralDocument(params.source, false), ...asked };
  const logged = { model, document: mistralDocument(params.source, true), ...asked };
  const response = (await withWireRequest(
    () => logged,
    postJson(openAIPath(conn, '/ocr'), bearer(conn), body, signal),
  )) as MistralOcr;
  if (!Array.isArray(response.pages)) {
    throw new ProviderError('invalid_response', 'The provider sent no pages');
  }
  const pages = response.pages.map((p, i): OcrPage => {
    if (typeof p?.markdown !== 'string') {
      throw new ProviderError('invalid_response', 'The provider sent a page without its markdown');
    }
    return { index: typeof p.index === 'number' ? p.index : i, markdown: p.markdown };
  });
  const reported = response.usage_info?.pages_processed;
  return {
    pages,
    pagesProcessed: typeof reported === 'number' ? reported : pages.length,
    providerRequest: logged,
    providerResponse: response,
  };
}

/** The mock's pages: one per PDF page object, one for an image, one for anything else. */
function mockPageCount(source: OcrSource): number {
  if (source.kind !== 'inline' || isImage(source.mimeType)) return 1;
  return Math.min(pdfPageObjects(source.data) ?? 1, 1000);
}

/** The text the mock reads its directives from: the URL, or the file's bytes. */
function mockText(source: OcrSource): string {
  if (source.kind === 'inline') return source.data.toString('latin1');
  try {
    return decodeURIComponent(source.url);
  } catch {
    return source.url;
  }
}

async function mockOcr(
  conn: ProviderConnection,
  model: string,
  params: OcrParams,
  signal: AbortSignal,
): Promise<OcrAnswer> {
  const logged = {
    model,
    document: mistralDocument(params.source, true),
    ...(params.pages && { pages: params.pages }),
  };
  return withWireRequest(
    () => logged,
    (async () => {
      const text = mockText(params.source);
      await mockMisbehaviour(text, model, { latencyMs: conn.mockLatencyMs, signal });
      const digest = createHash('sha256').update(text).digest('hex').slice(0, 12);
      const what = params.source.kind === 'inline' ? params.source.mimeType : params.source.url;
      const count = mockPageCount(params.source);
      // As Mistral does: only the pages asked for, of those the document has.
      const indexes = params.pages
        ? [...params.pages].filter((i) => i < count).sort((a, b) => a - b)
        : Array.from({ length: count }, (_, index) => index);
      const pages = indexes.map((index) => ({
        index,
        markdown: `# Page ${index + 1} of ${count}\n\nMock OCR of ${what} (${digest}).`,
      }));
      return {
        pages,
        pagesProcessed: pages.length,
        providerRequest: logged,
        providerResponse: {
          pages: pages.map((p) => ({
            ...p,
            images: [],
            dimensions: { dpi: 200, height: 2200, width: 1700 },
          })),
          model: `mock/${model}`,
          usage_info: {
            pages_processed: pages.length,
            doc_size_bytes: params.source.kind === 'inline' ? params.source.data.length : null,
          },
        },
      };
    })(),
  );
}

export function ocr(
  conn: ProviderConnection,
  model: string,
  params: OcrParams,
  signal: AbortSignal,
): Promise<OcrAnswer> {
  if (conn.descriptor.wire.format === 'mock') return mockOcr(conn, model, params, signal);
  if (conn.descriptor.id === 'mistral') return mistralOcr(conn, model, params, signal);
  return Promise.reject(unsupported(conn, 'OCR'));
}
