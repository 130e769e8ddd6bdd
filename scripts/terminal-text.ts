/**
 * Text made safe to print on an operator's terminal (`docs/security.md`, "Operator terminals"): every control
 * character but tab and line feed (C0, DEL, C1: an ESC or a CSI `\u009b` would move the cursor, recolour or rewrite
 * the screen), every format character (bidi overrides and isolates such as `\u202e`, which reorder what is shown,
 * zero-width ones) and the line and paragraph separators are written as `\uXXXX` escapes, which also keeps JSON valid.
 */
export function terminalSafe(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (char) =>
    char === '\n' || char === '\t'
      ? char
      : Array.from({ length: char.length }, (_, at) => `\\u${char.charCodeAt(at).toString(16).padStart(4, '0')}`).join(''),
  );
}

/**
 * A stored or imported field printed inside a line (a title, a file's name, a batch's reason): `terminalSafe`, and its
 * line feeds and tabs written as `\n` and `\t` too, so that it cannot print lines or columns of its own (a name of
 * a list whose line feed forged a batch in `blocks`, a description that forged an `md5` row in `info`).
 */
export function fieldSafe(text: string): string {
  return terminalSafe(text).replace(/[\n\t]/g, (char) => (char === '\n' ? '\\n' : '\\t'));
}
