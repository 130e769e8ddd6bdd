import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** README.md and every page of docs/, with their text. */
export function docTexts(): Array<{ path: string; text: string }> {
  const paths = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];
  return paths.map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));
}

/**
 * Each `npm run NAME -- ARGS` command line the docs show: in a code block (a whole line) or in a code span (a
 * mention, its line breaks read as spaces), its arguments' text without a shell comment or an input redirection. The
 * usage forms (`[--json]`, `show|rotate`, `FILE...`, `COMMAND`) are the tools' own help, not command lines: left out.
 */
export function documentedCommands(): Array<{ where: string; name: string; line: string; inline: boolean }> {
  const found: Array<{ where: string; name: string; line: string; inline: boolean }> = [];
  for (const { path, text } of docTexts()) {
    const fence = /```[a-z]*\n([\s\S]*?)```/g;
    const blocks = [...text.matchAll(fence)].map((match) => match[1] ?? '');
    // an escaped backtick (\`) is text, not the edge of a span
    const prose = text.replace(fence, '').replace(/\\`/g, '');
    const spans = [...prose.matchAll(/`([^`]+)`/g)].map((match) => (match[1] ?? '').replace(/\s+/g, ' '));
    for (const [source, inline] of [
      [blocks.join('\n'), false],
      [spans.join('\n'), true],
    ] as const) {
      for (const match of source.matchAll(/npm run (?:-s )?([a-z][a-z0-9:-]*) -- ([^\n]*)/g)) {
        const [, name = '', given = ''] = match;
        const line = given.replace(/\s(#|<).*$/, '').trim();
        if (/[[\]|]|\.\.\.|\bCOMMAND\b/.test(line)) continue;
        found.push({ where: `${path}: npm run ${name} -- ${line}`, name, line, inline });
      }
    }
  }
  return found;
}
