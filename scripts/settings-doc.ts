import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { contextKeyOf, REPLACED_SETTINGS, SETTINGS, type SettingName } from '../functions/settings-table';
import { DEPLOYMENT_CONTEXT } from '../lib/settings';
import { commandLine } from './command-line';

/**
 * `npm run docs:settings`: writes the tables of `docs/settings.md` from the one definition of each setting
 * (`SETTINGS` in `functions/config.ts`, `DEPLOYMENT_CONTEXT` in `lib/settings.ts`). A unit test fails when the file
 * differs from what this writes, so run it after changing a setting.
 */
export const SETTINGS_DOC = join(__dirname, '..', 'docs', 'settings.md');

const code = (text: string): string => `\`${text}\``;

/** A Markdown table laid out as Prettier lays it out (cells padded to their column's width). */
function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((title, column) => Math.max(3, title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

function shownDefault(name: SettingName): string {
  const setting: { default: string | undefined; shown?: string } = SETTINGS[name];
  if (setting.shown !== undefined) return setting.shown;
  return setting.default ? code(setting.default) : 'empty';
}

/** The generated parts, each by the name of its marker. */
function generatedParts(): Record<string, string> {
  const names = Object.keys(SETTINGS) as SettingName[];
  return {
    'function settings': table(
      ['variable', 'context key', 'default', 'meaning'],
      names.map((name) => [
        code(name),
        'setByStack' in SETTINGS[name] ? 'set by the stack' : code(contextKeyOf(name)),
        shownDefault(name),
        SETTINGS[name].meaning,
      ]),
    ),
    'deployment context': table(
      ['context key', 'what'],
      Object.entries(DEPLOYMENT_CONTEXT).map(([key, what]) => [code(key), what]),
    ),
    'replaced settings': table(
      ['setting', 'context key', 'replaced by'],
      Object.entries(REPLACED_SETTINGS).map(([name, by]) => [
        code(name),
        code(contextKeyOf(name)),
        by.map((replacement) => `${code(replacement)} (${code(contextKeyOf(replacement))})`).join(', '),
      ]),
    ),
  };
}

/** The document with every generated part written anew between its markers. */
export function settingsDoc(current: string): string {
  let text = current;
  for (const [part, content] of Object.entries(generatedParts())) {
    const start = `<!-- ${part}: written by npm run docs:settings -->`;
    const end = `<!-- end of ${part} -->`;
    const from = text.indexOf(start);
    const to = text.indexOf(end);
    if (from === -1 || to < from) throw new Error(`${SETTINGS_DOC} lacks the markers of ${part}`);
    text = `${text.slice(0, from + start.length)}\n\n${content}\n\n${text.slice(to)}`;
  }
  return text;
}

if (require.main === module) {
  commandLine('usage: npm run docs:settings   (writes the tables of docs/settings.md) (exit codes: 0 done, 1 failed, 2 usage)');
  writeFileSync(SETTINGS_DOC, settingsDoc(readFileSync(SETTINGS_DOC, 'utf8')));
  process.stdout.write(`wrote ${SETTINGS_DOC}\n`);
}
