import { execFileSync } from 'node:child_process';
import { buildSync } from 'esbuild';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mapStack } from '../../scripts/map-stack';

describe('npm run map-stack', () => {
  it("turns a bundle's positions in a stack trace into the source's, keeping the rest of the text", () => {
    const dir = mkdtempSync(join(tmpdir(), 'map-stack-'));
    try {
      const source = join(dir, 'upload-step.ts');
      writeFileSync(source, ['export function step(): never {', "  throw new Error('a failure');", '}', ''].join('\n'));
      buildSync({
        entryPoints: [source],
        bundle: true,
        platform: 'node',
        format: 'cjs',
        sourcemap: true,
        outfile: join(dir, 'index.js'),
      });
      // the bundle run as the API function runs it, without source maps applied (a process of its own: jest applies them)
      const program = "try { require('./index.js').step(); } catch (error) { process.stdout.write(error.stack); }";
      const stack = execFileSync(process.execPath, ['-e', program], { cwd: dir, encoding: 'utf8' });
      expect(stack).toMatch(/index\.js:\d+:\d+/);
      const map = new SourceMap(JSON.parse(readFileSync(join(dir, 'index.js.map'), 'utf8')) as SourceMapPayload);
      const mapped = mapStack(stack, map);
      expect(mapped).toMatch(/index\.js:\d+:\d+ \[[^\]]*upload-step\.ts:2:\d+\]/);
      expect(mapped.startsWith('Error: a failure')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
