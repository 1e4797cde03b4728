/**
 * Audio files as the speech and transcription types see them: what container a file is (by its
 * magic bytes, never by the name or type the client claims), how long it can play (WAV from its
 * header, never from its stated byte rate alone; other containers bounded from their size), and
 * WAV written from 16-bit PCM.
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

type WavFormat = {
  /** 1 PCM, 3 IEEE float, 6 A-law, 7 µ-law; anything else is a codec (0x55 MP3, 0x31 GSM…). */
  formatTag: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  blockAlign: number;
  bitsPerSample: number;
};

/** WAV format tags whose data is plain samples, and WAVE_FORMAT_EXTENSIBLE, which names one inside. */
const SAMPLE_FORMATS = new Set([1, 3, 6, 7]);
const EXTENSIBLE = 0xfffe;

/**
 * The widest samples a WAV file is taken to hold: 192 kHz, 8 channels, 32 bits (6 MB a second).
 * A header that claims more plays its bytes faster, so shorter: the claim is the client's alone,
 * and the file is priced as one the gateway cannot read (its size at LOWEST_BITRATE).
 */
const MAX_SAMPLE_RATE = 192_000;
const MAX_CHANNELS = 8;
const MAX_BITS = 32;

export type WavInfo = WavFormat & {
  /** The bytes of the first `data` chunk: what the header says plays (what is there of it). */
  dataBytes: number;
  /** The seconds the header says its samples play: the data at sampleRate × channels × bytes a sample. */
  seconds: number;
  /**
   * The most seconds any reader could play from this file: every byte from the first `data`
   * chunk to the end (a reader may go on to a second `data` chunk, or past a size of 0), at the
   * slowest rate the header supports (the rate its fields compute, the byte rate it states, and
   * its block size). Equal to `seconds` for an honest file; more for a forged one.
   */
  maxSeconds: number;
  /** The stated byte rate and block size agree with the rate the other fields compute. */
  consistent: boolean;
};

/**
 * A WAV file's format and how long its samples play, from its chunks; null where the header is
 * not a readable RIFF/WAVE of plain samples (no `fmt ` or `data` chunk, a codec rather than
 * samples, a field of 0, or a format wider than MAX_*). The durations never trust the stated
 * byte rate alone: it is a field the client writes, while a decoder (ffmpeg among them) plays
 * the samples at the sample rate, so a byte rate of 0xFFFFFFFF must not make ten minutes free.
 */
export function wavInfo(data: Buffer): WavInfo | null {
  if (audioContainer(data) !== 'wav') return null;
  let format: WavFormat | null = null;
  let offset = 12;
  while (offset + 8 <= data.length) {
    const id = data.toString('latin1', offset, offset + 4);
    const size = data.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ' && body + 16 <= data.length) {
      let formatTag = data.readUInt16LE(body);
      // WAVE_FORMAT_EXTENSIBLE carries the real tag in the first two bytes of its SubFormat GUID.
      if (formatTag === EXTENSIBLE && size >= 40 && body + 26 <= data.length) {
        formatTag = data.readUInt16LE(body + 24);
      }
      format = {
        formatTag,
        channels: data.readUInt16LE(body + 2),
        sampleRate: data.readUInt32LE(body + 4),
        byteRate: data.readUInt32LE(body + 8),
        blockAlign: data.readUInt16LE(body + 12),
        bitsPerSample: data.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      return format && samplesInfo(format, Math.min(size, data.length - body), data.length - body);
    }
    // Chunks are padded to an even size.
    offset = body + size + (size % 2);
  }
  return null;
}

function samplesInfo(format: WavFormat, dataBytes: number, bytesToEnd: number): WavInfo | null {
  const { formatTag, channels, sampleRate, byteRate, blockAlign, bitsPerSample } = format;
  if (!SAMPLE_FORMATS.has(formatTag)) return null;
  if (channels < 1 || channels > MAX_CHANNELS) return null;
  if (sampleRate < 1 || sampleRate > MAX_SAMPLE_RATE) return null;
  if (bitsPerSample < 1 || bitsPerSample > MAX_BITS) return null;
  // Samples are stored in whole bytes (12-bit audio in 16-bit words).
  const frameBytes = channels * Math.ceil(bitsPerSample / 8);
  const rate = sampleRate * frameBytes;
  // A reader that trusts the stated byte rate or block size instead plays slower where they are
  // smaller: the bound takes the slowest of the three.
  const slowest = Math.min(
    rate,
    byteRate > 0 ? byteRate : rate,
    blockAlign > 0 ? sampleRate * blockAlign : rate,
  );
  return {
    ...format,
    dataBytes,
    seconds: dataBytes / rate,
    maxSeconds: bytesToEnd / slowest,
    consistent: byteRate === rate && blockAlign === frameBytes,
  };
}

/**
 * How long an audio file plays, in seconds: `seconds`, the most it can play, read from facts the
 * client cannot bend (WAV: its data at the slowest rate its header supports; the compressed
 * containers, and a WAV of a codec, its size at LOWEST_BITRATE): what a block gate reserves and
 * the most a request is charged. `stated`: what its header says it plays, where a WAV header says
 * so consistently; null otherwise. Null where `data` is not audio.
 */
export function audioDuration(data: Buffer): { seconds: number; stated: number | null } | null {
  const container = audioContainer(data);
  if (container === null) return null;
  if (container === 'wav') {
    const info = wavInfo(data);
    if (info) return { seconds: info.maxSeconds, stated: info.consistent ? info.seconds : null };
    if (!hasWavChunks(data)) return null;
  }
  return { seconds: (data.length * 8) / LOWEST_BITRATE, stated: null };
}

/** Whether a RIFF/WAVE file has the `fmt ` and `data` chunks that make it audio at all. */
function hasWavChunks(data: Buffer): boolean {
  const seen = new Set<string>();
  let offset = 12;
  while (offset + 8 <= data.length && !seen.has('data')) {
    const size = data.readUInt32LE(offset + 4);
    seen.add(data.toString('latin1', offset, offset + 4));
    offset += 8 + size + (size % 2);
  }
  return seen.has('fmt ') && seen.has('data');
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
