import { parseArgs } from 'node:util';
import { parseProblem } from './parse-problem';

/**
 * The command line of a tool that takes no options of its own (its settings are environment variables): `--help`
 * (or `-h`) prints its usage and ends with 0; an option, or more than `maxPositionals` arguments, is a usage error:
 * one line naming it, then the usage, and exit 2. Every `npm run` tool ends with 0 done, 1 failed, 2 usage.
 * Answers the positionals it takes.
 */
export function commandLine(usage: string, maxPositionals = 0, argv: readonly string[] = process.argv.slice(2)): string[] {
  const fail = (problem: string): never => {
    process.stderr.write(`${problem}\n${usage}\n`);
    process.exit(2);
  };
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    return fail(parseProblem(error));
  }
  if (parsed.values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  const extra = parsed.positionals.slice(maxPositionals);
  if (extra.length > 0) fail(`unexpected argument: ${extra.join(' ')}`);
  return parsed.positionals;
}
