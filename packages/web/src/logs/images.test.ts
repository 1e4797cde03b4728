import { describe, expect, it } from 'vitest';
import { findImages, imageFileName, imageSource } from './images.ts';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const JPEG = '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHR8eHR';

describe('finding the images in a provider answer', () => {
  it('finds OpenAI image URLs and base64 images in data[]', () => {
    const images = findImages({
      created: 1,
      data: [{ url: 'https://images.example.com/a.png?sig=1' }, { b64_json: PNG }],
    });
    expect(images).toEqual([
      { src: 'https://images.example.com/a.png?sig=1', mediaType: null, path: 'data[0].url' },
      { src: `data:image/png;base64,${PNG}`, mediaType: 'image/png', path: 'data[1].b64_json' },
    ]);
  });

  it('finds image_url content parts in a chat message', () => {
    const images = findImages({
      choices: [
        {
          message: {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Here it is' },
              { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${JPEG}` } },
            ],
          },
        },
      ],
    });
    expect(images).toEqual([
      {
        src: `data:image/jpeg;base64,${JPEG}`,
        mediaType: 'image/jpeg',
        path: 'choices[0].message.content[1].image_url',
      },
    ]);
  });

  it('finds Anthropic image blocks and Gemini inline data, typing raw base64 by its magic', () => {
    expect(
      findImages({
        content: [{ type: 'image', source: { type: 'base64', media_type: 'image/webp', data: PNG } }],
      }),
    ).toEqual([{ src: `data:image/webp;base64,${PNG}`, mediaType: 'image/webp', path: 'content[0].source' }]);
    expect(
      findImages({ candidates: [{ content: { parts: [{ inlineData: { mimeType: 'x', data: JPEG } }] } }] }),
    ).toEqual([
      {
        src: `data:image/jpeg;base64,${JPEG}`,
        mediaType: 'image/jpeg',
        path: 'candidates[0].content.parts[0].inlineData',
      },
    ]);
  });

  it('finds a data: image URL anywhere, once', () => {
    const url = `data:image/png;base64,${PNG}`;
    expect(findImages({ output: { first: url, again: [url] } })).toEqual([
      { src: url, mediaType: 'image/png', path: 'output.first' },
    ]);
  });

  it('finds nothing in a text answer, and takes no URL a browser would run', () => {
    expect(
      findImages({ choices: [{ message: { role: 'assistant', content: 'Echo: hi' } }], usage: { total: 3 } }),
    ).toEqual([]);
    expect(findImages(null)).toEqual([]);
    expect(findImages({ data: [{ url: 'javascript:alert(1)' }] })).toEqual([]);
    expect(findImages({ type: 'image_url', image_url: 'data:text/html;base64,PGgxPg==' })).toEqual([]);
    expect(imageSource('data:image/svg+xml;utf8,<svg onload=alert(1)>')).toBeNull();
    expect(imageSource('ftp://example.com/a.png')).toBeNull();
  });
});

describe('the file name of a downloaded image', () => {
  const entry = '5e2d7f0a-1b3c-4d5e-8f90-a1b2c3d4e5f6';

  it('names the entry, the image and its type', () => {
    expect(
      imageFileName(entry, 0, { src: `data:image/jpeg;base64,${JPEG}`, mediaType: 'image/jpeg', path: '' }),
    ).toBe('gatehouse-5e2d7f0a-1.jpg');
    expect(imageFileName(entry, 1, { src: 'https://x.test/img.webp?a=1', mediaType: null, path: '' })).toBe(
      'gatehouse-5e2d7f0a-2.webp',
    );
    expect(imageFileName(entry, 2, { src: 'https://x.test/render', mediaType: null, path: '' })).toBe(
      'gatehouse-5e2d7f0a-3.png',
    );
  });
});
