import { Logger } from '@aws-lambda-powertools/logger';
import type { LogItem } from '@aws-lambda-powertools/logger';
import { terminalSafe } from '../scripts/terminal-text';

/** What Powertools adds to every line, which a terminal reader does not need. */
const QUIET_KEYS = new Set(['level', 'message', 'timestamp', 'service', 'sampling_rate', 'xray_trace_id', 'cold_start']);

/**
 * The handler's log, one short line a request for a person at a terminal (`npm start`): `12:00:01 POST
 * /api/1/upload 200 523 ms 127.0.0.1`, other lines as their level, message and fields. The same entries as in
 * Lambda, where Powertools writes them as JSON; `LOG_FORMAT=json` (or output that is not a terminal) keeps that.
 */
export class TerminalLogger extends Logger {
  /** Where the lines go: the terminal (standard output), or a test. */
  write: (line: string) => void = (line) => void process.stdout.write(line);

  protected override printLog(_logLevel: number, log: LogItem): void {
    this.write(`${terminalSafe(shortLine(log.getAttributes()))}\n`);
  }

  protected override createLogger(options?: ConstructorParameters<typeof Logger>[0]): Logger {
    const child = new TerminalLogger(options);
    child.write = this.write;
    return child;
  }
}

/** One line of a log entry: a request as its method, path, status, time and client; anything else as its fields. */
export function shortLine(attributes: Record<string, unknown>): string {
  const time = typeof attributes['timestamp'] === 'string' ? new Date(attributes['timestamp']).toTimeString().slice(0, 8) : '';
  if (attributes['message'] === 'request') {
    const { method, path, status, durationMs, clientIp } = attributes as Record<string, string | number | undefined>;
    // the query as the log keeps it: secrets already replaced, long values cut
    const query = Object.entries((attributes['query'] ?? {}) as Record<string, string>);
    const search = query.length > 0 ? `?${query.map(([name, value]) => `${name}=${value}`).join('&')}` : '';
    return `${time} ${method} ${path}${search} ${status} ${durationMs} ms ${clientIp}`;
  }
  const fields = Object.entries(attributes)
    .filter(([name, value]) => value !== undefined && !QUIET_KEYS.has(name) && !name.startsWith('function_'))
    .map(([name, value]) => `${name}=${fieldText(value)}`);
  return [time, String(attributes['level']), String(attributes['message']), ...fields].join(' ');
}

function fieldText(value: unknown): string {
  if (typeof value === 'string') return value;
  // an error: its name and message, not its stack
  if (value && typeof value === 'object' && 'message' in value && 'name' in value)
    return `${String((value as { name: unknown }).name)}: ${String((value as { message: unknown }).message)}`;
  return JSON.stringify(value);
}
