/**
 * Audio files as the speech and transcription types see them: what container a file is (by its
 * magic bytes, never by the name or type the client claims), how long it plays (WAV read exactly
 * from its header; other containers bounded from their size), and WAV written from 16-bit PCM.
 */

export type AudioContainer = 'wav' | 'mp3' | 'm4a' | 'ogg' | 'webm' | 'flac';

export const AUDIO_MIME_TYPES: Record<AudioContainer, string> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  ogg: 'audio/ogg',
  webm: 'audio/webm',
  flac: 'audio/flac',
};

/**
 * The lowest bitrate a file of a compressed container is assumed to have, in bits per second:
 * its size at this rate bounds its duration (speech codecs go lower, but not what clients upload:
 * OpenAI's own files are 32 kbit/s and up). What a block gate reserves for a file it cannot read.
 */
export const LOWEST_BITRATE = 8_000;

/** The container of `data`, or null where it is not an audio file this gateway knows. */
export function audioContainer(data: Buffer): AudioContainer | null {
  if (data.length < 12) return null;
  const ascii = (start: number, end: number) => data.toString('latin1', start, end);
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'wav';
  if (ascii(0, 3) === 'ID3') return 'mp3';
  if (data[0] === 0xff && ((data[1] as number) & 0xe0) === 0xe0) return 'mp3';
  if (ascii(4, 8) === 'ftyp') return 'm4a';
  if (ascii(0, 4) === 'OggS') return 'ogg';
  if (data.readUInt32BE(0) === 0x1a45dfa3) return 'webm';
  if (ascii(0, 4) === 'fLaC') return 'flac';
  return null;
}

type WavFormat = { channels: number; sampleRate: number; byteRate: number; bitsPerSample: number };

/**
 * A WAV file's format and the seconds its samples play, from its chunks; null where the header
 * is not a readable RIFF/WAVE (no `fmt ` or `data` chunk, a byte rate of 0). A `data` chunk that
 * claims more than the file holds (a stream's 0xFFFFFFFF, or a cut file) counts what is there.
 */
export function wavInfo(data: Buffer): (WavFormat & { seconds: number; dataBytes: number }) | null {
  if (audioContainer(data) !== 'wav') return null;
  let format: WavFormat | null = null;
  let offset = 12;
  while (offset + 8 <= data.length) {
    const id = data.toString('latin1', offset, offset + 4);
    const size = data.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ' && body + 16 <= data.length) {
      format = {
        channels: data.readUInt16LE(body + 2),
        sampleRate: data.readUInt32LE(body + 4),
        byteRate: data.readUInt32LE(body + 8),
        bitsPerSample: data.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!format || format.byteRate === 0) return null;
      const dataBytes = Math.min(size, data.length - body);
      return { ...format, dataBytes, seconds: dataBytes / format.byteRate };
    }
    // Chunks are padded to an even size.
    offset = body + size + (size % 2);
  }
  return null;
}

/**
 * How long an audio file plays, in seconds: `exact` for WAV; for the compressed containers, an
 * upper bound from the size at LOWEST_BITRATE. Null where `data` is not audio.
 */
export function audioDuration(data: Buffer): { seconds: number; exact: boolean } | null {
  const container = audioContainer(data);
  if (container === null) return null;
  if (container === 'wav') {
    const info = wavInfo(data);
    return info ? { seconds: info.seconds, exact: true } : null;
  }
  return { seconds: (data.length * 8) / LOWEST_BITRATE, exact: false };
}

/** A WAV file (RIFF, PCM) around 16-bit little-endian samples. */
export function wavFile(pcm: Buffer, sampleRate: number, channels = 1): Buffer {
  const header = Buffer.alloc(44);
  const byteRate = sampleRate * channels * 2;
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(byteRate, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

/** A note standing for a file in the JSON the log keeps: its type and size, never its bytes. */
export function mediaNote(mimeType: string, bytes: number, where: string): string {
  return `[${mimeType}, ${bytes.toLocaleString('en-US')} bytes, ${where}]`;
}
