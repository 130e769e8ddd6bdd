import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONTEXT_SETTINGS, DEPLOYMENT_CONTEXT } from '../../lib/settings';
import { parseCommand } from '../../scripts/admin';
import { UsageError } from '../../scripts/admin-verbs';
import { docTexts, documentedCommands } from '../support/doc-commands';

/**
 * Every command the docs show is one the tools take, so that docs and code cannot drift apart again: each
 * `npm run NAME` is a script of package.json, each `npm run admin -- ...` line is a command line the admin tool reads
 * (its verb, its arguments and its options; `docs/clients.md`'s snippets are run by `test/e2e/clients-doc.test.ts`,
 * `docs/local.md`'s AWS CLI lines by `test/e2e/aws-cli.test.ts`), every admin verb is documented, and each
 * `-c KEY=...` of a deploy is a context key the stack reads.
 */
const ROOT = join(__dirname, '..', '..');
const texts = docTexts();
const scripts = Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: object }).scripts);

/** Placeholders of the docs' command lines, and a value each stands for. */
const PLACEHOLDERS: Record<string, string> = {
  REFERENCE: 'Ab3dE',
  FILE: 'list.txt',
  NEW_KEY: 'a-new-key-0123456789',
  RANGE: '203.0.113.7',
  DIR: '.data',
  N: '3',
  NAME: 'ImageUpload',
};

/** Each `npm run admin -- ...` of the docs, its placeholders given a value. */
function adminLines(): Array<{ where: string; argv: string[]; inline: boolean }> {
  return documentedCommands()
    .filter(({ name }) => name === 'admin')
    .map(({ where, line, inline }) => ({
      where,
      argv: line.split(/\s+/).map((token) => PLACEHOLDERS[token] ?? token),
      inline,
    }));
}

describe('the commands the docs show', () => {
  it('name only scripts that package.json has', () => {
    const named = texts.flatMap(({ path, text }) =>
      [...text.matchAll(/npm run (?:-s )?([a-z][a-z0-9:-]*[a-z0-9])/g)].map((match) => ({ path, name: match[1] ?? '' })),
    );
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter(({ name }) => !scripts.includes(name))).toEqual([]);
  });

  it('give the admin tool command lines it reads, and document every one of its commands', () => {
    const lines = adminLines();
    expect(lines.length).toBeGreaterThan(20);
    const refused: string[] = [];
    const documented = new Set<string>();
    for (const { where, argv, inline } of lines) {
      try {
        const parsed = parseCommand(argv);
        if ('command' in parsed) documented.add(parsed.command);
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        // a mention in the text (`admin -- restore`, `admin -- --stack NAME`) names a command, or the target, alone
        const mention = inline && / missing |^no command given/.test(error.message);
        if (mention) documented.add(argv.find((token) => !token.startsWith('-')) ?? '');
        else refused.push(`${where}: ${error.message}`);
      }
    }
    expect(refused).toEqual([]);
    const help = parseCommand(['--help']);
    const verbs = 'help' in help ? [...help.help.matchAll(/^ {2}([a-z][a-z-]*) /gm)].map((match) => match[1]) : [];
    expect(verbs.length).toBeGreaterThan(10);
    expect(verbs.filter((verb) => verb !== 'help' && !documented.has(verb ?? ''))).toEqual([]);
  });

  it('deploy with context keys the stack reads', () => {
    const known = new Set([...Object.keys(DEPLOYMENT_CONTEXT), ...CONTEXT_SETTINGS.map(({ key }) => key)]);
    const used = texts.flatMap(({ path, text }) =>
      [...text.matchAll(/-c ([A-Za-z]+)=/g)].map((match) => ({ path, key: match[1] ?? '' })),
    );
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter(({ key }) => !known.has(key))).toEqual([]);
  });
});
