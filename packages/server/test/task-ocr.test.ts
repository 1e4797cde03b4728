/**
 * OCR through gates, end to end: POST /v3/ocr on the mock (pages derived from the input) and on
 * a local server speaking Mistral's OCR API; fallback, an exact block limit under concurrency,
 * the 1,000-page bound of a document by URL, one log entry per request, bad input.
 */
import { describe, expect, it } from 'vitest';
import { MAX_DOCUMENT_PAGES, ocrKind, pageBound } from '../src/dataplane/tasks/ocr.ts';
import { findModel } from '../src/domain/catalog.ts';
import { useTestApp } from './support/app.ts';
import { logEntryOf, readGate } from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';
import {
  expectBlockLimitHolds,
  expectFallsBack,
  expectFieldIssues,
  expectRefused,
  hasBearer,
  taskRoute,
  useUpstream,
} from './support/tasks.ts';

// One local server answers as Mistral (/mistral/v1/ocr), checking its key as the real one does.
const upstream = await useUpstream({
  serves: (path) => path === '/mistral/v1/ocr',
  keyOk: (request) => hasBearer(request, 'm-key'),
});
const app = useTestApp({ MISTRAL_API_KEY: 'm-key', MISTRAL_BASE_URL: `${upstream.url}/mistral` });

type OcrAnswer = {
  id: string;
  model: string;
  ocr: { pages: { index: number; markdown: string }[] };
  usage: { pages: number };
  costUsd: number;
  latencyMs: number;
};

/** A minimal PDF of `pages` page objects (uncompressed), with `text` in a comment. */
function pdf(pages: number, text = ''): Buffer {
  const kids = Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(' ');
  const objects = [
    '1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj',
    `2 0 obj << /Type /Pages /Kids [${kids}] /Count ${pages} >> endobj`,
    ...Array.from({ length: pages }, (_, i) => `${i + 3} 0 obj << /Type /Page /Parent 2 0 R >> endobj`),
  ];
  return Buffer.from(`%PDF-1.4\n%${text}\n${objects.join('\n')}\n%%EOF\n`, 'latin1');
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

const ocr = taskRoute(app, '/v3/ocr', { taskType: 'ocr', model: 'mock/ocr' });

function mistralAnswer(pages: number) {
  return {
    pages: Array.from({ length: pages }, (_, index) => ({
      index,
      markdown: `page ${index} text`,
      images: [],
      dimensions: { dpi: 200, height: 2200, width: 1700 },
    })),
    model: 'mistral-ocr-latest',
    usage_info: { pages_processed: pages, doc_size_bytes: 1234 },
  };
}

describe('POST /v3/ocr on the mock', () => {
  it('reads one page per PDF page object, deterministically, priced per page, and logs it', async () => {
    const user = await signUpUser(app);
    const gate = await ocr.gate(user);
    const res = await ocr.send(user, gate.id, { base64: pdf(3).toString('base64') });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as OcrAnswer;
    expect(answer.model).toBe('mock/ocr');
    expect(answer.ocr.pages.map((p) => p.index)).toEqual([0, 1, 2]);
    expect(answer.ocr.pages[0]?.markdown).toContain('Page 1 of 3');
    expect(answer.usage).toEqual({ pages: 3 });
    expect(answer.costUsd).toBeCloseTo(3 * 0.001, 12);
    const again = (await (
      await ocr.send(user, gate.id, { base64: pdf(3).toString('base64') })
    ).json()) as OcrAnswer;
    expect(again.ocr).toEqual(answer.ocr);

    const entry = await logEntryOf(app, answer.id);
    expect(entry).toMatchObject({ endpoint: '/v3/ocr', success: true, modelUsed: 'mock/ocr' });
    expect(Number(entry.costUsd)).toBeCloseTo(answer.costUsd, 10);
    // The file is not in the log: a note of its type and size stands for it.
    expect(JSON.stringify(entry.providerRequest)).toContain('[application/pdf, ');

    const image = (await (
      await ocr.send(user, gate.id, { base64: PNG.toString('base64') })
    ).json()) as OcrAnswer;
    expect(image.usage).toEqual({ pages: 1 });
    const url = (await (
      await ocr.send(user, gate.id, { documentUrl: 'https://example.com/report.pdf' })
    ).json()) as OcrAnswer;
    expect(url.ocr.pages).toHaveLength(1);
    expect(url.ocr.pages[0]?.markdown).toContain('https://example.com/report.pdf');
  });

  it('falls back from a failing model to Mistral, recording both attempts', async () => {
    const user = await signUpUser(app);
    upstream.reply({ type: 'json', body: mistralAnswer(2) });
    await expectFallsBack(app, user, ocr, {
      fallback: 'mistral/mistral-ocr-latest',
      data: (fail) => ({ base64: pdf(2, fail).toString('base64') }),
    });
  });

  it('refuses bad input with a 400 naming the field, and a gate of another type', async () => {
    const user = await signUpUser(app);
    const gate = await ocr.gate(user);
    const b64 = pdf(1).toString('base64');
    await expectFieldIssues(
      (data) => ocr.send(user, gate.id, data),
      [
        [{}, 'data'],
        [{ documentUrl: 'https://a.example/x.pdf', base64: b64 }, 'data'],
        [{ documentUrl: 'https://a.example/x.pdf', imageUrl: 'https://a.example/x.png' }, 'data'],
        [{ documentUrl: 'not a url' }, 'data.documentUrl'],
        [{ documentUrl: 'ftp://a.example/x.pdf' }, 'data.documentUrl'],
        [{ imageUrl: 'nope' }, 'data.imageUrl'],
        [{ base64: 'not base64!' }, 'data.base64'],
        [{ base64: Buffer.from('plain text').toString('base64') }, 'data.mimeType'],
        [{ base64: b64, colour: 'red' }, 'data.colour'],
        [{ base64: b64, pages: [] }, 'data.pages'],
        [{ base64: b64, pages: [0, 0] }, 'data.pages'],
        [{ base64: b64, pages: [-1] }, 'data.pages.0'],
        [{ base64: b64, pages: [0, 1.5] }, 'data.pages.1'],
        [{ base64: b64, pages: [MAX_DOCUMENT_PAGES] }, 'data.pages.0'],
      ],
    );
    const chatGate = await createGate(app, user, { model: 'mock/echo' });
    await expectRefused(await ocr.send(user, chatGate.id, { base64: b64 }), 'OCR requests need an ocr gate');
  });
});

describe('a block limit', () => {
  it('holds under 50 concurrent requests: no overshoot, one log entry each', async () => {
    const user = await signUpUser(app);
    const base64 = pdf(2).toString('base64');
    const N = 7;
    const worst = ocrKind.worstCase(['mock/ocr'], {
      source: { kind: 'inline', data: pdf(2), mimeType: 'application/pdf' },
    });
    expect(worst).toBeCloseTo(2 * 0.001, 12);
    const { spending, paid } = await expectBlockLimitHolds(app, user, {
      worst,
      fits: N,
      exact: true,
      route: ocr,
      data: { base64 },
    });
    expect(spending).toBeCloseTo(N * worst, 10);
    for (const e of paid) expect(Number(e.costUsd)).toBeCloseTo(worst, 10);
  });

  it('reserves 1,000 pages for a document by URL, which it cannot see, unless it names its pages', async () => {
    expect(pageBound({ kind: 'documentUrl', url: 'https://a.example/x.pdf' })).toBe(MAX_DOCUMENT_PAGES);
    expect(pageBound({ kind: 'documentUrl', url: 'https://a.example/x.pdf' }, [0, 4, 9])).toBe(3);
    // The fewer of the pages named and the pages it has.
    expect(pageBound({ kind: 'inline', data: pdf(2), mimeType: 'application/pdf' }, [0, 1, 2, 3])).toBe(2);
    expect(pageBound({ kind: 'imageUrl', url: 'https://a.example/x.png' })).toBe(1);
    // Page objects in compressed object streams cannot be counted: the limit bounds them.
    const hidden = Buffer.from(
      '%PDF-1.7\n1 0 obj << /Type /ObjStm /N 3 >> stream\nxx\nendstream\n',
      'latin1',
    );
    expect(pageBound({ kind: 'inline', data: hidden, mimeType: 'application/pdf' })).toBe(MAX_DOCUMENT_PAGES);

    const user = await signUpUser(app);
    // Room for 500 pages: an inline PDF of 2 pages passes; a URL (1,000 pages at worst) does not,
    // and a refused reservation suspends the gate for the period, as for every task type.
    const gate = await ocr.gate(user, { spendingLimit: 0.5, spendingEnforcement: 'block' });
    const inline = await ocr.send(user, gate.id, { base64: pdf(2).toString('base64') });
    expect(inline.status, await inline.clone().text()).toBe(200);
    // Ten pages named: ten reserved; the mock's URL document has one page, one is billed.
    const named = await ocr.send(user, gate.id, {
      documentUrl: 'https://a.example/x.pdf',
      pages: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    });
    expect(named.status, await named.clone().text()).toBe(200);
    expect(((await named.json()) as OcrAnswer).usage).toEqual({ pages: 1 });
    const url = await ocr.send(user, gate.id, { documentUrl: 'https://a.example/x.pdf' });
    expect(url.status).toBe(402);
    expect((await readGate(app, user, gate.id)).spendingCurrent).toBeCloseTo(0.003, 10);
  });
});

describe('Mistral’s /v1/ocr', () => {
  it('sends a document URL, an image URL, and inline files as data URLs; prices the pages it reports', async () => {
    const user = await signUpUser(app);
    const gate = await ocr.gate(user, { model: 'mistral-ocr-latest' });
    expect(gate.model).toBe('mistral/mistral-ocr-latest');
    const perPage = findModel('mistral/mistral-ocr-latest')?.unitPrices.perPage ?? Number.NaN;
    expect(perPage).toBeGreaterThan(0);

    upstream.reply({ type: 'json', body: mistralAnswer(4) });
    const res = await ocr.send(user, gate.id, { documentUrl: 'https://arxiv.org/pdf/2201.04234' });
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as OcrAnswer;
    expect(upstream.last().path).toBe('/mistral/v1/ocr');
    expect(upstream.last().body).toEqual({
      model: 'mistral-ocr-latest',
      document: { type: 'document_url', document_url: 'https://arxiv.org/pdf/2201.04234' },
    });
    expect(answer.ocr.pages).toEqual(
      [0, 1, 2, 3].map((index) => ({ index, markdown: `page ${index} text` })),
    );
    expect(answer.usage).toEqual({ pages: 4 });
    expect(answer.costUsd).toBeCloseTo(4 * perPage, 12);
    const entry = await logEntryOf(app, answer.id);
    expect(Number(entry.costUsd)).toBeCloseTo(answer.costUsd, 10);

    // Only some pages: sent as Mistral's `pages`, numbered from 0.
    upstream.reply({ type: 'json', body: mistralAnswer(2) });
    const some = await ocr.send(user, gate.id, { documentUrl: 'https://a.example/long.pdf', pages: [0, 7] });
    expect(some.status, await some.clone().text()).toBe(200);
    expect(upstream.last().body).toEqual({
      model: 'mistral-ocr-latest',
      document: { type: 'document_url', document_url: 'https://a.example/long.pdf' },
      pages: [0, 7],
    });

    upstream.reply({ type: 'json', body: mistralAnswer(1) });
    await ocr.send(user, gate.id, { imageUrl: 'https://a.example/receipt.png' });
    expect(upstream.last().body.document).toEqual({
      type: 'image_url',
      image_url: 'https://a.example/receipt.png',
    });

    upstream.reply({ type: 'json', body: mistralAnswer(2) });
    const file = pdf(2);
    await ocr.send(user, gate.id, { base64: file.toString('base64') });
    expect(upstream.last().body.document).toEqual({
      type: 'document_url',
      document_url: `data:application/pdf;base64,${file.toString('base64')}`,
    });

    upstream.reply({ type: 'json', body: mistralAnswer(1) });
    await ocr.send(user, gate.id, { base64: PNG.toString('base64') });
    expect(upstream.last().body.document).toEqual({
      type: 'image_url',
      image_url: `data:image/png;base64,${PNG.toString('base64')}`,
    });

    upstream.reply({ type: 'json', body: mistralAnswer(1) });
    await ocr.send(user, gate.id, {
      base64: Buffer.from('PK docx').toString('base64'),
      mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    });
    expect(upstream.last().body.document.document_url).toMatch(
      /^data:application\/vnd\.openxmlformats-officedocument\.wordprocessingml\.document;base64,/,
    );
  });

  it('fails on an answer without pages', async () => {
    const user = await signUpUser(app);
    const gate = await ocr.gate(user, { model: 'mistral/mistral-ocr-latest' });
    upstream.reply({
      type: 'json',
      body: { model: 'mistral-ocr-latest', usage_info: { pages_processed: 1 } },
    });
    const res = await ocr.send(user, gate.id, { imageUrl: 'https://a.example/receipt.png' });
    expect(res.status).toBe(502);
  });
});
