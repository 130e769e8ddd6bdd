/**
 * The settings a tool takes from the environment (`npm run bench`, `load`, `load:memory`), read and checked: each one
 * wrong is named with what it takes, all of them at once, and the tool ends before it runs (exit 1), rather than print
 * tables of NaN.
 */
export class EnvSettings {
  private readonly problems: string[] = [];

  constructor(
    /** The tool, as its npm script is named. */
    private readonly tool: string,
    private readonly env: Readonly<Record<string, string | undefined>> = process.env,
  ) {}

  /** A whole number of at least `least`; `fallback` when unset. */
  whole(name: string, fallback: number, least = 1): number {
    const text = this.env[name];
    if (text === undefined || text.trim() === '') return fallback;
    const value = Number(text);
    if (Number.isSafeInteger(value) && value >= least) return value;
    this.problems.push(`${name} must be a whole number of at least ${least}, got "${text}"`);
    return fallback;
  }

  /** Whole numbers of at least `least`, separated by commas; `fallback` when unset. */
  wholeList(name: string, fallback: readonly number[], least = 0): number[] {
    const text = this.env[name];
    if (text === undefined || text.trim() === '') return [...fallback];
    const values = text.split(',').map((part) => Number(part.trim()));
    if (values.every((value) => Number.isSafeInteger(value) && value >= least)) return values;
    this.problems.push(`${name} must be whole numbers of at least ${least}, separated by commas, got "${text}"`);
    return [...fallback];
  }

  /** One of `choices`, or undefined when unset. */
  oneOf<T extends string>(name: string, choices: readonly T[]): T | undefined {
    const text = this.env[name];
    if (text === undefined || text === '') return undefined;
    if ((choices as readonly string[]).includes(text)) return text as T;
    this.problems.push(`${name} must be one of ${choices.join(', ')}, got "${text}"`);
    return undefined;
  }

  /** Ends the process when a setting was wrong, naming each; otherwise nothing. */
  check(): void {
    if (this.problems.length === 0) return;
    process.stderr.write(`npm run ${this.tool}: invalid settings:\n- ${this.problems.join('\n- ')}\n`);
    process.exit(1);
  }
}
