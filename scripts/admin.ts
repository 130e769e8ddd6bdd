import { parseArgs } from 'node:util';
import { ACCESS_VERBS } from './admin-access';
import { BLOCK_VERBS } from './admin-blocks';
import { IMAGE_VERBS, UsageError, VERB_OPTIONS, type Call, type Verb, type VerbOption } from './admin-verbs';
import { adminFor, localTarget, outputsOfFile, outputsOfStack, stackTarget, unreachable } from './admin-target';
import { parseProblem } from './parse-problem';
import { terminalSafe } from './terminal-text';

/**
 * `npm run admin -- [TARGET] COMMAND ...`: the operator's tools (docs/operations.md), run with the operator's own AWS
 * credentials (IAM decides who may) against the local service or a deployed stack; no public endpoint. Exit codes: 0
 * done, 1 failed, 2 usage.
 */
const VERBS: Record<string, Verb> = { ...IMAGE_VERBS, ...BLOCK_VERBS, ...ACCESS_VERBS };
/** The order of the commands in the help. */
const ORDER = [
  'takedown',
  'restore',
  'info',
  'reports',
  'similar',
  'blocks',
  'unblock',
  'block-hashes',
  'ban',
  'unban',
  'bans',
  'list',
  'stats',
  'key',
];

const TARGET_OPTIONS = {
  'data-dir': { type: 'string' },
  stack: { type: 'string' },
  outputs: { type: 'string' },
  'id-padding': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** What a string option's value is called in the help. */
const VALUE_NAMES: Partial<Record<VerbOption, string>> = {
  within: 'N',
  for: 'DURATION',
  since: 'DURATION',
  ip: 'ADDRESS|CIDR',
  limit: 'N',
  days: 'N',
};

const TARGET_HELP = `target (before or after the command):
  --data-dir DIR     the local service's data folder (default .data)
  --stack NAME       a deployed stack, by its outputs (with the operator's AWS credentials)
  --outputs FILE     cdk deploy's --outputs-file
  --id-padding N     the stack's ID_PADDING, for a stack deployed before it had the IdPadding output`;

/** A command's usage line: `takedown REFERENCE [--block] [--similar]`. */
function usageOf(name: string, verb: Verb): string {
  const options = verb.options.map((option) => `[--${option}${VALUE_NAMES[option] ? ` ${VALUE_NAMES[option]}` : ''}]`);
  return [name, ...verb.args, ...options].join(' ');
}

/** The whole help: every command with what it does, the target, the exit codes. */
function helpText(): string {
  const commands = ORDER.map((name) => {
    const verb = VERBS[name] as Verb;
    return `  ${usageOf(name, verb)}\n      ${verb.summary}`;
  });
  return [
    'usage: npm run admin -- [TARGET] COMMAND [ARGUMENTS] [OPTIONS]',
    'commands:',
    ...commands,
    '  help [COMMAND]\n      this text, or more of one command (also: COMMAND --help)',
    TARGET_HELP,
    'exit codes: 0 done, 1 failed, 2 usage (docs/operations.md)',
  ].join('\n');
}

/** One command's help. */
function verbHelp(name: string, verb: Verb): string {
  const more = verb.more ? [verb.more] : [];
  return [`usage: npm run admin -- [TARGET] ${usageOf(name, verb)}`, verb.summary, ...more, TARGET_HELP].join('\n');
}

export type Output = Pick<Call, 'print' | 'progress' | 'warn'>;

/** What a command line asks: a help text to print, or a command to run, its arguments and options checked. */
export type Parsed =
  { help: string } | { verb: Verb; command: string; args: string[]; values: ReturnType<typeof parseArgsOf>['values'] };

function parseArgsOf(argv: readonly string[]) {
  try {
    const options = { ...TARGET_OPTIONS, ...VERB_OPTIONS };
    return parseArgs({ args: [...argv], allowPositionals: true, strict: true, options });
  } catch (error) {
    throw new UsageError(`${parseProblem(error)} (npm run admin -- --help)`);
  }
}

/** Reads a command line without running anything; throws UsageError for one the tool cannot run (the docs' test). */
export function parseCommand(argv: readonly string[]): Parsed {
  const { values, positionals } = parseArgsOf(argv);
  const [command, ...args] = positionals;
  if (command === 'help' || values.help) {
    const asked = command === 'help' ? args[0] : command;
    const verb = asked === undefined ? undefined : VERBS[asked];
    if (asked !== undefined && !verb) throw new UsageError(`no command ${asked} (npm run admin -- --help lists them)`);
    return { help: asked !== undefined && verb ? verbHelp(asked, verb) : helpText() };
  }
  if (command === undefined) throw new UsageError('no command given (npm run admin -- --help lists them)');
  const verb = VERBS[command];
  if (!verb) throw new UsageError(`no command ${command} (npm run admin -- --help lists them)`);
  const refuse = (problem: string): never => {
    throw new UsageError(`${command}: ${problem} (npm run admin -- help ${command})`);
  };
  const given = (Object.keys(VERB_OPTIONS) as VerbOption[]).filter((option) => values[option] !== undefined);
  const foreign = given.filter((option) => !verb.options.includes(option));
  if (foreign.length > 0) refuse(`it takes no ${foreign.map((option) => `--${option}`).join(', ')}`);
  const required = verb.args.filter((arg) => !arg.startsWith('[')).length;
  if (args.length < required) refuse(`missing ${verb.args.slice(args.length, required).join(' ')}`);
  if (args.length > verb.args.length) refuse(`unexpected argument ${args.slice(verb.args.length).join(' ')}`);
  return { verb, command, args, values };
}

/** Runs one command line; answers the exit code. Throws UsageError (exit 2) or the failure (exit 1). */
export async function main(argv: readonly string[], output: Output): Promise<number> {
  // an operator's machine may run Node 20: the SDK's notice about it is not this tool's output
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
  const parsed = parseCommand(argv);
  if ('help' in parsed) {
    output.print(parsed.help);
    return 0;
  }
  const { verb, args, values } = parsed;
  const padding = values['id-padding'];
  const target = values.outputs
    ? stackTarget(outputsOfFile(values.outputs), padding)
    : values.stack
      ? stackTarget(await outputsOfStack(values.stack), padding)
      : localTarget(values['data-dir'] ?? process.env['DATA_DIR'] ?? '.data');
  const opened = adminFor(target);
  try {
    await verb.run({
      ...output,
      admin: opened.admin,
      args,
      values,
      cdn: !target.local,
      inForce: target.inForce,
      key: opened.key,
    });
    return 0;
  } catch (error) {
    throw unreachable(error, target) ?? error;
  } finally {
    opened.close();
  }
}

if (require.main === module) {
  // stored and imported text (notes, names, a bad line of a list) reaches the terminal only escaped
  const toError = (line: string): void => void process.stderr.write(`${terminalSafe(line)}\n`);
  const output: Output = {
    print: (line) => void process.stdout.write(`${terminalSafe(line)}\n`),
    // progress (a long import's steps) on a terminal only: piped, the output is the results alone
    progress: (line) => (process.stderr.isTTY ? toError(line) : undefined),
    warn: toError,
  };
  // output piped to a reader that stopped (`| head`): the rest is not wanted, and that is no failure
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
  main(process.argv.slice(2), output)
    .then((code) => (process.exitCode = code))
    .catch((error: unknown) => {
      toError(error instanceof Error ? error.message : String(error));
      process.exitCode = error instanceof UsageError ? 2 : 1;
    });
}
