import { readFileSync } from 'node:fs';
import { AdminError } from '../functions/core/admin/admin-error';

/** A file the operator named: its text, or one line saying what is wrong with it. */
export function readNamedFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'a folder, not a file'
          : `cannot be read (${code ?? String(cause)})`;
    throw new AdminError(`${what} ${file}: ${why}`, { cause });
  }
}
