const MAX_NAME_CHARS = 200;
const MAX_FILENAME_CHARS = 255;
const RENDITION_SUFFIX = /\.(th|md)$/i;

export type NamingMode = 'original' | 'random' | 'id';

/** The file name a client sent, reduced to its last path segment, without control characters. */
export function cleanOriginalFilename(filename: string): string {
  const lastSegment = filename.split(/[\\/]/).pop() ?? '';

  const printable = lastSegment.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim();
  return [...printable].slice(0, MAX_FILENAME_CHARS).join('');
}

/** `photo.final.JPG` -> `photo.final`; a name without a dot is its own base name. */
export function baseNameOf(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return dot > 0 ? filename.slice(0, dot) : filename;
}

/**
 * The stored base name of "original" naming: accents removed, whitespace to `-`, only `[A-Za-z0-9_.-]`, at most 200
 * characters, no trailing `.th`/`.md` (those keys belong to renditions); empty when nothing is left.
 */
export function sanitizeName(baseName: string): string {
  let name = baseName
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/\s+/gu, '-')
    .replace(/[^A-Za-z0-9_.-]/g, '')
    .slice(0, MAX_NAME_CHARS);
  // Dots at the ends make hidden files and `name..jpg`; rendition suffixes may hide behind each other (`a.th.md`).
  for (;;) {
    const trimmed = name.replace(/^\.+|\.+$/g, '').replace(RENDITION_SUFFIX, '');
    if (trimmed === name) return name;
    name = trimmed;
  }
}

/** Title derived from a file name: `my_cool-photo.jpg` -> `my cool photo`. */
export function titleFromFilename(filename: string): string {
  return baseNameOf(filename).replace(/[_-]+/g, ' ').replace(/\s+/g, ' ').trim();
}
