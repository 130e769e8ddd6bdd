import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { join } from 'node:path';
import { NSFW_MODEL_FILE } from '../functions/imaging/nsfw-classifier';
import { commandLine } from './command-line';

/**
 * `npm run map-stack [-- MAP_FILE] < trace.txt`: a stack trace from the API function's logs, its `index.js:LINE:COL`
 * positions turned into the TypeScript sources' own. The API function does not apply its source maps at run time
 * (they would cost every cold start: `docs/performance.md`, "Cold start"); its asset keeps them. The map is the
 * API asset's `index.js.map` in `cdk.out` (the last `cdk deploy` or `cdk synth` wrote it; the one whose folder holds
 * the NSFW model), or the file given.
 */
function apiMapFile(): string {
  const out = join(__dirname, '..', 'cdk.out');
  const asset = existsSync(out)
    ? readdirSync(out).find((name) => name.startsWith('asset.') && existsSync(join(out, name, 'models', NSFW_MODEL_FILE)))
    : undefined;
  if (!asset) throw new Error('no API asset in cdk.out: run npx cdk synth (the same code as deployed), or name the map file');
  return join(out, asset, 'index.js.map');
}

/** Every `index.js:LINE:COL` of the text with its source position after it. */
export function mapStack(text: string, map: SourceMap): string {
  return text.replace(/(\S*index\.js):(\d+):(\d+)/g, (whole, _file: string, line: string, column: string) => {
    const entry = map.findEntry(Number(line) - 1, Number(column) - 1);
    if (!('originalSource' in entry) || !entry.originalSource) return whole;
    const source = entry.originalSource.replace(/^.*?(functions|node_modules)\//, '$1/');
    return `${whole} [${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}]`;
  });
}

function main(): void {
  const [given] = commandLine(
    "usage: npm run map-stack -- [MAP_FILE] < trace.txt   (default: the API bundle's map in cdk.out) (exit codes: 0 done, 1 failed, 2 usage)",
    1,
  );
  const file = given ?? apiMapFile();
  const map = new SourceMap(JSON.parse(readFileSync(file, 'utf8')) as SourceMapPayload);
  process.stdout.write(mapStack(readFileSync(0, 'utf8'), map));
}

if (require.main === module) {
  try {
    main();
  } catch (error) {
    // no map to read, or no trace on standard input: said in a line, without a trace of this tool's own
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
