/** OCR over HTTP: POST /v3/ocr. OpenAI has no OCR API, so there is no /v1 route. */
import { nativeOcrSchema, type OcrRequest, ocrKind, ocrRequest } from '../../dataplane/tasks/ocr.ts';
import { parseWith } from '../../domain/errors.ts';
import type { OcrAnswer } from '../../providers/tasks/ocr.ts';
import type { NativeTask } from './routes.ts';

export const nativeOcr: NativeTask<OcrRequest, OcrAnswer> = {
  path: 'ocr',
  kind: ocrKind,
  doc: {
    summary: 'Read a document or an image as Markdown through a gate',
    body: nativeOcrSchema,
    ok: { description: '`ocr.pages` (each page as Markdown) and `usage.pages`' },
  },
  parse(body) {
    const { data, gateId: _gateId, ...envelope } = parseWith(nativeOcrSchema, body);
    return ocrRequest(data, envelope);
  },
  answer(o) {
    return {
      ocr: { pages: o.answer.pages.map((p) => ({ index: p.index, markdown: p.markdown })) },
      usage: { pages: o.answer.pagesProcessed },
    };
  },
};
