import { MalformedImageError } from '../malformed';

/** What the container parsers share: the options, failing as malformed, the byte ranges kept. */

export interface StripOptions {
  /** Keep EXIF/XMP/IPTC/comments; only bytes after the end are dropped. */
  keepMetadata: boolean;
  /**
   * A JPEG's EXIF orientation (2 to 8) to keep when its EXIF goes: written back as an EXIF block of that one tag, so
   * that browsers show the stored original upright without a re-encode (`docs/imaging.md`).
   */
  orientation?: number;
}

export function fail(message: string): never {
  throw new MalformedImageError(message);
}

/** Byte ranges to keep; joined once at the end, or the input itself when they cover it whole. */
export class Ranges {
  private readonly parts: Array<[number, number]> = [];

  constructor(private readonly source: Buffer) {}

  keep(start: number, end: number): void {
    const last = this.parts[this.parts.length - 1];
    if (last && last[1] === start) last[1] = end;
    else this.parts.push([start, end]);
  }

  join(extra: Buffer[] = []): Buffer {
    const [only] = this.parts;
    if (this.parts.length === 1 && only && only[0] === 0 && only[1] === this.source.length && extra.length === 0)
      return this.source;
    return Buffer.concat([...this.parts.map(([start, end]) => this.source.subarray(start, end)), ...extra]);
  }
}

export function startsWith(buffer: Buffer, offset: number, text: string): boolean {
  return buffer.toString('latin1', offset, offset + text.length) === text;
}
