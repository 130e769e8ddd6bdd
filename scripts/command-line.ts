import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseProblem } from './parse-problem';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * A tool's command line as every `npm run` tool reads it: its options and `--help` (or `-h`), at most `maxPositionals`
 * arguments. Answers what it read, or how the tool ends: `--help` prints the usage (exit 0); an unknown option, a
 * missing value or an extra argument prints one line naming it, then the usage (exit 2). Every tool ends with 0 done,
 * 1 failed, 2 usage.
 */
export function readCommandLine<O extends Options>(
  usage: string,
  argv: readonly string[],
  options: O,
  maxPositionals = Number.POSITIVE_INFINITY,
) {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    return { exit: 2, text: `${parseProblem(error)}\n${usage}\n` } as const;
  }
  if ((parsed.values as { help?: boolean }).help) return { exit: 0, text: `${usage}\n` } as const;
  const extra = parsed.positionals.slice(maxPositionals);
  if (extra.length > 0) return { exit: 2, text: `unexpected argument: ${extra.join(' ')}\n${usage}\n` } as const;
  return { read: parsed };
}

/**
 * The command line of a tool that takes no options of its own (its settings are environment variables): ends the
 * process on `--help` or a usage error (`readCommandLine`), and answers the positionals it takes.
 */
export function commandLine(usage: string, maxPositionals = 0, argv: readonly string[] = process.argv.slice(2)): string[] {
  const reading = readCommandLine(usage, argv, {}, maxPositionals);
  if ('read' in reading) return reading.read.positionals;
  (reading.exit === 0 ? process.stdout : process.stderr).write(reading.text);
  process.exit(reading.exit);
}
