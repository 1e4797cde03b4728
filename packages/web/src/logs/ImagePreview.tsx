import { CopyButton, copyText } from './CopyButton.tsx';
import { type FoundImage, imageFileName } from './images.ts';

/** The clipboard takes PNG only: anything else is redrawn as one. */
async function pngOf(src: string): Promise<Blob> {
  const blob = await (await fetch(src)).blob();
  if (blob.type === 'image/png') return blob;
  const bitmap = await createImageBitmap(blob);
  const canvas = document.createElement('canvas');
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  canvas.getContext('2d')?.drawImage(bitmap, 0, 0);
  return new Promise((resolve, reject) =>
    canvas.toBlob(
      (png) => (png ? resolve(png) : reject(new Error('The image could not be redrawn'))),
      'image/png',
    ),
  );
}

async function copyImage(src: string): Promise<void> {
  await navigator.clipboard.write([new ClipboardItem({ 'image/png': pngOf(src) })]);
}

/**
 * Saves the image under a useful name. A data: URL downloads as it is; a remote one is fetched
 * first (the download attribute is ignored across origins), or opened where it lives.
 */
async function download(src: string, fileName: string): Promise<void> {
  let href = src;
  let revoke = false;
  if (!src.startsWith('data:')) {
    try {
      href = URL.createObjectURL(await (await fetch(src)).blob());
      revoke = true;
    } catch {
      window.open(src, '_blank', 'noopener');
      return;
    }
  }
  const link = document.createElement('a');
  link.href = href;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  if (revoke) setTimeout(() => URL.revokeObjectURL(href), 10_000);
}

/** The images a provider answered with, each with copy and download buttons. */
export function ImagePreview({ entryId, images }: { entryId: string; images: readonly FoundImage[] }) {
  return (
    <div className="image-previews">
      {images.map((image, index) => {
        const fileName = imageFileName(entryId, index, image);
        return (
          <figure key={image.src} className="image-preview">
            <img
              src={image.src}
              alt={`What the model answered (${index + 1} of ${images.length})`}
              loading="lazy"
            />
            <figcaption>
              <span className="mono muted small">{image.path}</span>
              <div className="image-actions">
                <CopyButton copy={() => copyImage(image.src)} label="Copy image" />
                {!image.src.startsWith('data:') && !image.stored && (
                  <CopyButton copy={copyText(image.src)} label="Copy URL" />
                )}
                <button type="button" className="button small" onClick={() => download(image.src, fileName)}>
                  Download
                </button>
              </div>
            </figcaption>
          </figure>
        );
      })}
    </div>
  );
}
