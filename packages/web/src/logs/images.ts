/**
 * Finds the images in a provider's answer, whatever its wire format: OpenAI images
 * (`data[].url` / `data[].b64_json`), chat content parts of type `image_url`, Anthropic `image`
 * blocks, Gemini `inlineData` parts, and any `data:image/…` URL elsewhere in the JSON.
 */

export type FoundImage = {
  /** What an <img> can show: a data: URL or an http(s) URL. */
  src: string;
  /** The image's media type when the answer says it (always for data: URLs). */
  mediaType: string | null;
  /** Where in the JSON it was found, e.g. `data[0].b64_json`, or which stored media it is. */
  path: string;
  /** Stored by the gateway beside the entry (its URL is the gateway's, not worth copying). */
  stored?: boolean;
};

const DATA_URL_HEAD = /^data:(image\/[a-z0-9.+-]+);base64,/i;
const BASE64 = /^[A-Za-z0-9+/=\s]+$/;
const MAX_IMAGES = 20;
const MAX_DEPTH = 12;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An address safe to put in <img src>: http(s), or a base64 image data: URL. Nothing else. */
export function imageSource(value: unknown): { src: string; mediaType: string | null } | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (text.startsWith('data:')) {
    const head = DATA_URL_HEAD.exec(text);
    if (!head || !BASE64.test(text.slice(head[0].length))) return null;
    return { src: text, mediaType: head[1]?.toLowerCase() ?? null };
  }
  try {
    const url = new URL(text);
    if (url.protocol === 'https:' || url.protocol === 'http:') return { src: url.href, mediaType: null };
  } catch {
    // Not a URL.
  }
  return null;
}

/** Raw base64 as providers send it (b64_json, inlineData.data); a guess at its type from its magic. */
function fromBase64(data: unknown, mediaType?: unknown): { src: string; mediaType: string } | null {
  if (typeof data !== 'string' || data.length < 16 || !BASE64.test(data)) {
    return null;
  }
  const type =
    typeof mediaType === 'string' && /^image\/[a-z0-9.+-]+$/i.test(mediaType)
      ? mediaType.toLowerCase()
      : sniff(data);
  return { src: `data:${type};base64,${data.replace(/\s/g, '')}`, mediaType: type };
}

function sniff(base64: string): string {
  if (base64.startsWith('iVBOR')) return 'image/png';
  if (base64.startsWith('/9j/')) return 'image/jpeg';
  if (base64.startsWith('R0lGOD')) return 'image/gif';
  if (base64.startsWith('UklGR')) return 'image/webp';
  return 'image/png';
}

/** Every image in `json`, in document order, each once. */
export function findImages(json: unknown): FoundImage[] {
  const found: FoundImage[] = [];
  const seen = new Set<string>();
  const add = (image: { src: string; mediaType: string | null } | null, path: string) => {
    if (!image || seen.has(image.src) || found.length >= MAX_IMAGES) return;
    seen.add(image.src);
    found.push({ ...image, path });
  };

  const visit = (value: unknown, path: string, depth: number) => {
    if (depth > MAX_DEPTH || found.length >= MAX_IMAGES) return;
    if (typeof value === 'string') {
      if (value.startsWith('data:image/')) add(imageSource(value), path);
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        visit(item, `${path}[${index}]`, depth + 1);
      });
      return;
    }
    if (!isRecord(value)) return;
    const at = (key: string) => (path ? `${path}.${key}` : key);

    // OpenAI images: { url } or { b64_json } in `data`.
    if (path.match(/(^|\.)data\[\d+\]$/)) {
      add(imageSource(value.url), at('url'));
      add(fromBase64(value.b64_json, value.mime_type ?? value.output_format), at('b64_json'));
    }
    // Chat content part: { type: 'image_url', image_url: { url } | url }.
    if (value.type === 'image_url') {
      const imageUrl = value.image_url;
      add(imageSource(isRecord(imageUrl) ? imageUrl.url : imageUrl), at('image_url'));
    }
    // Anthropic: { type: 'image', source: { type: 'base64', media_type, data } | { type: 'url', url } }.
    if (value.type === 'image' && isRecord(value.source)) {
      const source = value.source;
      add(
        source.type === 'url' ? imageSource(source.url) : fromBase64(source.data, source.media_type),
        at('source'),
      );
    }
    // Gemini: { inlineData: { mimeType, data } }.
    if (isRecord(value.inlineData)) {
      add(fromBase64(value.inlineData.data, value.inlineData.mimeType), at('inlineData'));
    }
    for (const [key, child] of Object.entries(value)) visit(child, at(key), depth + 1);
  };

  visit(json, '', 0);
  return found;
}

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
};

/** A file name for the download button: the entry's id and the image's number and type. */
export function imageFileName(entryId: string, index: number, image: FoundImage): string {
  const fromPath = /\.([a-z0-9]{3,4})(?:[?#]|$)/i.exec(image.src.startsWith('data:') ? '' : image.src)?.[1];
  const extension = (image.mediaType && EXTENSIONS[image.mediaType]) ?? fromPath?.toLowerCase() ?? 'png';
  return `gatehouse-${entryId.slice(0, 8)}-${index + 1}.${extension}`;
}
