import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ITEM_PREFIX, SINGLE_ITEM } from '../../functions/adapters/table-schema';
import { VIEWER_IMAGE_HEADERS } from '../../functions/http/edge-contract';

/** Facts the docs state that the code decides: each checked against the code, so that neither drifts alone. */
const ROOT = join(__dirname, '..', '..');
const doc = (name: string): string => readFileSync(join(ROOT, name), 'utf8');

describe('the docs say what the code does', () => {
  it("lists every kind of item of the table in docs/architecture.md's table", () => {
    const rows = doc('docs/architecture.md')
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => /^\| `([^`{]+)/.exec(line)?.[1] ?? '');
    const kinds = [...Object.values(ITEM_PREFIX), ...Object.values(SINGLE_ITEM)];
    expect(kinds.filter((kind) => !rows.includes(kind))).toEqual([]);
  });

  it('gives the images the Cache-Control docs/decisions.md says the local server sends', () => {
    expect(doc('docs/decisions.md').replace(/\s+/g, ' ')).toContain(
      `\`Cache-Control: ${VIEWER_IMAGE_HEADERS['Cache-Control']}\``,
    );
  });

  it("starts the service on Windows with npm start's settings that matter there", () => {
    const start = (JSON.parse(doc('package.json')) as { scripts: { start: string } }).scripts.start;
    const threads = /UV_THREADPOOL_SIZE=\d+/.exec(start)?.[0] ?? 'UV_THREADPOOL_SIZE missing from npm start';
    const node = /node .*$/.exec(start)?.[0] ?? '';
    for (const name of ['README.md', 'docs/local.md']) {
      const text = doc(name).replace(/\s+/g, ' ');
      expect({ name, threads: text.includes(`set ${threads}`), node: text.includes(node) }).toEqual({
        name,
        threads: true,
        node: true,
      });
    }
  });
});
