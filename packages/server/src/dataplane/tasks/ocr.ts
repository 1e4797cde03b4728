/**
 * OCR through a gate: a document or an image, by URL or inline as base64 → its pages in
 * markdown. Priced per page read. A block gate reserves a bound on the pages: an image is one
 * page; an inline PDF is at most its page objects; a document it cannot see (a URL, a PDF whose
 * pages are compressed, another format) is bounded only by Mistral's limit of 1,000 pages a
 * document, so a block gate needs room for 1,000 pages to read one, unless the request names the
 * pages to read (`pages`, as Mistral takes them): then at most that many.
 */
import { z } from 'zod';
import { findModel } from '../../domain/catalog.ts';
import { ValidationError } from '../../domain/errors.ts';
import type { Gate } from '../../generated/prisma/client.ts';
import {
  isImage,
  type OcrAnswer,
  type OcrParams,
  type OcrSource,
  ocr,
  pdfPageObjects,
} from '../../providers/tasks/ocr.ts';
import { connectionFor, mergeModel, type TaskKind, type TaskRequestBase } from '../pipeline.ts';
import { countOf } from '../usage.ts';
import { envelopeFields, nativeEnvelope } from './common.ts';

/** Mistral OCR's limit on one document (docs.mistral.ai: 50 MB, 1,000 pages). */
export const MAX_DOCUMENT_PAGES = 1000;

const httpUrl = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' });

export const ocrData = z
  .strictObject({
    documentUrl: httpUrl.optional(),
    imageUrl: httpUrl.optional(),
    base64: z
      .string()
      .min(1, 'must not be empty')
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be base64 (without a data: prefix)')
      .optional(),
    mimeType: z
      .string()
      .regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a MIME type such as application/pdf')
      .optional(),
    /** The pages to read, numbered from 0 (Mistral's `pages`); all of them when absent. */
    pages: z
      .array(
        z
          .int('must be whole page numbers')
          .min(0, 'must be page numbers from 0')
          .max(MAX_DOCUMENT_PAGES - 1, `must be page numbers below ${MAX_DOCUMENT_PAGES}`),
      )
      .min(1, 'must name at least one page')
      .max(MAX_DOCUMENT_PAGES)
      .refine((pages) => new Set(pages).size === pages.length, 'must not name a page twice')
      .optional(),
  })
  .refine(
    (d) => [d.documentUrl, d.imageUrl, d.base64].filter((s) => s !== undefined).length === 1,
    'needs exactly one of documentUrl, imageUrl and base64',
  );

export const nativeOcrSchema = nativeEnvelope(ocrData);

export type OcrRequest = TaskRequestBase & { source: OcrSource; pages?: number[] };

/** A file's type from its first bytes: PDF and the common image formats. */
function sniff(data: Buffer): string | undefined {
  if (data.subarray(0, 4).toString('latin1') === '%PDF') return 'application/pdf';
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return 'image/png';
  }
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif';
  if (
    data.subarray(0, 4).toString('latin1') === 'RIFF' &&
    data.subarray(8, 12).toString('latin1') === 'WEBP'
  ) {
    return 'image/webp';
  }
  return undefined;
}

function sourceOf(data: z.infer<typeof ocrData>): OcrSource {
  if (data.documentUrl !== undefined) return { kind: 'documentUrl', url: data.documentUrl };
  if (data.imageUrl !== undefined) return { kind: 'imageUrl', url: data.imageUrl };
  const bytes = Buffer.from(data.base64 ?? '', 'base64');
  const mimeType = data.mimeType ?? sniff(bytes);
  if (mimeType === undefined) {
    throw new ValidationError([
      { path: 'data.mimeType', message: 'is required where the file is neither a PDF nor a common image' },
    ]);
  }
  return { kind: 'inline', data: bytes, mimeType };
}

export function ocrRequest(
  data: z.infer<typeof ocrData>,
  envelope: Omit<z.infer<typeof nativeOcrSchema>, 'data' | 'gateId'>,
): OcrRequest {
  return { source: sourceOf(data), ...(data.pages && { pages: data.pages }), ...envelopeFields(envelope) };
}

/** The most pages `source` can bill, read whole or only its `pages`. */
export function pageBound(source: OcrSource, pages?: readonly number[]): number {
  return Math.min(pages?.length ?? MAX_DOCUMENT_PAGES, pagesIn(source));
}

function pagesIn(source: OcrSource): number {
  if (source.kind === 'imageUrl') return 1;
  // A document by URL is unseen here: only the provider's limit bounds it.
  if (source.kind === 'documentUrl') return MAX_DOCUMENT_PAGES;
  if (isImage(source.mimeType)) return 1;
  const pages = source.mimeType === 'application/pdf' ? pdfPageObjects(source.data) : null;
  return Math.min(pages ?? MAX_DOCUMENT_PAGES, MAX_DOCUMENT_PAGES);
}

const perPage = (modelId: string) => findModel(modelId)?.unitPrices.perPage ?? 0;

export const ocrKind: TaskKind<OcrRequest, OcrParams, OcrAnswer> = {
  taskType: 'ocr',
  noun: 'OCR',
  merge(gate: Gate, request: OcrRequest) {
    const { model, ignoredOverrides } = mergeModel(gate, request);
    const params = { source: request.source, ...(request.pages && { pages: request.pages }) };
    return { model, params, ignoredOverrides };
  },
  worstCase: (models, params) => pageBound(params.source, params.pages) * Math.max(0, ...models.map(perPage)),
  attempt: (a) => ocr(connectionFor(a), a.model.providerModel, a.params, a.timing.signal),
  price(_model, modelId, _params, answer) {
    const pages = countOf('pages processed', 'pages', answer.pagesProcessed);
    return {
      usage: { promptTokens: 0, completionTokens: 0 },
      tokensEstimated: false,
      costUsd: pages * perPage(modelId),
      billed: { quantity: pages, unit: 'pages' },
    };
  },
};
