import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { docTexts } from '../support/doc-commands';

/**
 * Every command the docs give to run (a line of a shell block, a command line of a text block, a whole JavaScript,
 * Python or PowerShell snippet) is run by a suite, or says next to it (on its line, or on its block's first) why no test
 * runs it (`# needs an AWS account`, `# not run by the tests: ...`). A runner names the suite and a text of it that shows it runs that command, so that a
 * command added to the docs with no test behind it, or a suite that stops running one, fails here.
 */
const ROOT = join(__dirname, '..', '..');

interface Runner {
  /** The doc the command is in, when the command alone does not say which suite runs it. */
  doc?: string;
  command: RegExp;
  suite: string;
  /** Text of the suite that runs the command (or reads it from the doc, to run it). */
  shows: string;
}

const RUNNERS: Runner[] = [
  { command: /^npm install$/, suite: '.ci/run', shows: 'npm ci' },
  { command: /^npm install && npm start$/, suite: 'test/support/local-process.ts', shows: 'manifest.scripts.start' },
  { command: /^curl .*localhost:3000\//, suite: 'test/e2e/clients-doc.test.ts', shows: "runs the README's curl line" },
  { command: /^npm test$/, suite: '.ci/run', shows: '\nnpm test\n' },
  { command: /^sudo apt-get install -y chromium\b/, suite: '.ci/run', shows: 'apt-get install -y -qq chromium' },
  { command: /^npm run test:browser$/, suite: '.ci/run', shows: '\nnpm run test:browser' },
  {
    command: /^aws ssm (get|put)-parameter --name \/image-upload\/api-key /,
    suite: 'test/e2e/aws-cli.test.ts',
    shows: "the README's key lines",
  },
  { command: /^npm run smoke -- /, suite: 'test/e2e/local-server.test.ts', shows: 'passes the post-deploy smoke test' },
  {
    command: /^npm run admin -- --stack ImageUpload /,
    suite: 'test/e2e/documented-admin.test.ts',
    shows: 'documentedCommands()',
  },
  { command: /^npm run -s upload -- /, suite: 'test/e2e/two-step.test.ts', shows: 'npm run upload sends several files' },
  {
    doc: 'docs/clients.md',
    command: /^(curl|ticket=\$\(curl|import) /,
    suite: 'test/e2e/clients-doc.test.ts',
    shows: 'DOC.matchAll(/```(sh|js|python)',
  },
  {
    doc: 'docs/local.md',
    command: /^(export AWS_|aws |url=|curl -fsS )/,
    suite: 'test/e2e/aws-cli.test.ts',
    shows: "join(ROOT, 'docs', 'local.md')",
  },
  {
    doc: 'docs/local.md',
    command: /^(moto_server -p 5000 &|AWS_ENDPOINT_URL=\S+ .*npm start)$/,
    suite: 'test/e2e/local-server.test.ts',
    shows: 'AWS_ENDPOINT_URL: moto?.endpoint',
  },
];

/** What says, next to a command, that no test runs it, and why. */
const NOT_RUN = /(#|\/\/) (needs an AWS account|not run by the tests)\b/;

interface Documented {
  doc: string;
  command: string;
  /** The command's own comment, or the snippet's: where `NOT_RUN` is looked for. */
  comment: string;
}

/** The commands of one doc: each line of its shell blocks, each `npm`/`npx`/`aws`/`curl` line of its text blocks, each snippet. */
function commandsOf(doc: string, text: string): Documented[] {
  const found: Documented[] = [];
  for (const [, language = '', body = ''] of text.matchAll(/```([a-z]*)\n([\s\S]*?)```/g)) {
    if (['js', 'python', 'powershell'].includes(language)) {
      found.push({ doc, command: body.split('\n')[0] ?? '', comment: body });
      continue;
    }
    if (language !== 'sh' && language !== 'text') continue;
    // a reason on the block's first line is each of its commands'
    const blockReason = NOT_RUN.test(body.split('\n')[0] ?? '') ? (body.split('\n')[0] ?? '') : '';
    // a line continued with a backslash is one command
    for (const line of body.replace(/\\\n\s*/g, ' ').split('\n')) {
      const [command = '', own = ''] = line.trim().split(/\s+(?=# )/, 2);
      const comment = `${blockReason} ${own}`;
      if (command === '' || command.startsWith('#')) continue;
      if (language === 'text' && !/^(npm|npx|aws|curl) /.test(command)) continue;
      found.push({ doc, command, comment });
    }
  }
  return found;
}

const documented = docTexts().flatMap(({ path, text }) => commandsOf(path, text));

describe('the commands of the docs', () => {
  it('are found: the README, the deployment, the clients, the local and the operations guides', () => {
    const docs = new Set(documented.map(({ doc }) => doc));
    for (const doc of ['README.md', 'docs/deployment.md', 'docs/clients.md', 'docs/local.md', 'docs/operations.md'])
      expect(docs).toContain(doc);
    expect(documented.length).toBeGreaterThan(40);
  });

  it('are each run by a suite, or say next to them why no test runs them', () => {
    const unrun = documented
      .filter(({ comment }) => !NOT_RUN.test(comment))
      .filter(({ doc, command }) => !RUNNERS.some((runner) => (runner.doc ?? doc) === doc && runner.command.test(command)))
      .map(({ doc, command }) => `${doc}: ${command}`);
    expect(unrun).toEqual([]);
  });

  it('name suites that exist and show that they run them', () => {
    const missing = RUNNERS.filter(({ suite, shows }) => {
      const path = join(ROOT, suite);
      return !existsSync(path) || !readFileSync(path, 'utf8').includes(shows);
    }).map(({ suite, shows }) => `${suite} does not show ${JSON.stringify(shows)}`);
    expect(missing).toEqual([]);
  });

  it('say why where none runs them, and no more: a reason is given only where no runner is', () => {
    const needless = documented
      .filter(({ comment }) => NOT_RUN.test(comment))
      .filter(({ doc, command }) => RUNNERS.some((runner) => (runner.doc ?? doc) === doc && runner.command.test(command)))
      .map(({ doc, command }) => `${doc}: ${command}`);
    expect(needless).toEqual([]);
  });
});
