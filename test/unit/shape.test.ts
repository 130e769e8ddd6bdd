import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The shape the code keeps (docs/architecture.md), measured with the TypeScript parser: short functions, an upload
 * that reads as its order, CDK classes of one screen, narrow ports, core files under 300 lines, and no error dropped
 * without a name. A change that grows past one of these fails here, and is split instead.
 */
const ROOT = join(__dirname, '..', '..');

function filesUnder(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

const parsed = (file: string): ts.SourceFile =>
  ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);

/** Every function, method and constructor of a file, with its length in lines. */
function functionsOf(file: string): Array<{ where: string; lines: number; constructor: boolean }> {
  const source = parsed(file);
  const found: Array<{ where: string; lines: number; constructor: boolean }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = ts.isConstructorDeclaration(node) ? 'constructor' : (node.name?.getText() ?? '(anonymous)');
      found.push({
        where: `${relative(ROOT, file)}:${start + 1} ${name}`,
        lines: end - start + 1,
        constructor: ts.isConstructorDeclaration(node),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const longerThan = (rows: Array<{ where: string; lines: number }>, max: number): string[] =>
  rows.filter((row) => row.lines > max).map((row) => `${row.where}: ${row.lines} lines`);

describe('the shape of the code', () => {
  const functions = filesUnder(join(ROOT, 'functions')).flatMap(functionsOf);
  const lib = filesUnder(join(ROOT, 'lib')).flatMap(functionsOf);

  it('keeps every function of functions/ within 60 lines', () => {
    expect(longerThan(functions, 60)).toEqual([]);
  });

  it("reads the upload's order in 30 lines at most", () => {
    const upload = functions.find((row) => /upload-service\.ts:\d+ upload$/.test(row.where));
    expect(upload?.lines).toBeLessThanOrEqual(30);
  });

  it('keeps every CDK constructor within 80 lines (the stack is its parts)', () => {
    expect(
      longerThan(
        lib.filter((row) => row.constructor),
        80,
      ),
    ).toEqual([]);
  });

  it('keeps every port of the core to 10 members at most: one port per role', () => {
    const wide: string[] = [];
    const visit = (file: string, node: ts.Node): void => {
      // a port: an interface with methods (the shapes it passes are data, whatever their size)
      if (ts.isInterfaceDeclaration(node) && node.members.some(ts.isMethodSignature) && node.members.length > 10)
        wide.push(`${relative(ROOT, file)} ${node.name.text}: ${node.members.length} members`);
      ts.forEachChild(node, (child) => visit(file, child));
    };
    for (const file of filesUnder(join(ROOT, 'functions', 'core'))) visit(file, parsed(file));
    expect(wide).toEqual([]);
  });

  it('passes no callback through a port or a record of the core: what comes later is a promise, not a call back', () => {
    const callbacks: string[] = [];
    const isCallback = (type: ts.TypeNode | undefined): boolean =>
      type !== undefined &&
      (ts.isFunctionTypeNode(type) ||
        (ts.isUnionTypeNode(type) && type.types.some(isCallback)) ||
        (ts.isParenthesizedTypeNode(type) && isCallback(type.type)));
    const visit = (file: string, node: ts.Node): void => {
      if (ts.isInterfaceDeclaration(node))
        for (const member of node.members) {
          const parameters = ts.isMethodSignature(member) ? member.parameters : [];
          const typed = [...parameters, ...(ts.isPropertySignature(member) ? [member] : [])];
          for (const one of typed)
            if (isCallback(one.type)) callbacks.push(`${relative(ROOT, file)} ${node.name.text}.${member.name?.getText()}`);
        }
      ts.forEachChild(node, (child) => visit(file, child));
    };
    for (const file of filesUnder(join(ROOT, 'functions', 'core', 'ports'))) visit(file, parsed(file));
    expect(callbacks).toEqual([]);
  });

  it("builds the stack from parts that take their props, not the stack: no part of lib/ imports the stack's module", () => {
    const importers = filesUnder(join(ROOT, 'lib'))
      .filter((file) => !/(image-upload-stack|app)\.ts$/.test(file))
      .filter((file) =>
        ts
          .preProcessFile(readFileSync(file, 'utf8'), true, true)
          .importedFiles.some((ref) => /\/image-upload-stack$/.test(ref.fileName)),
      )
      .map((file) => relative(ROOT, file));
    expect(importers).toEqual([]);
  });

  /** Files of these folders longer than 300 lines. */
  const longFiles = (...folders: string[][]): string[] =>
    folders
      .flatMap((folder) => filesUnder(join(ROOT, ...folder)))
      .map((file) => ({ where: relative(ROOT, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter((file) => file.lines > 300)
      .map((file) => `${file.where}: ${file.lines} lines`);

  it('keeps every file of functions/, lib/ and the tools under 300 lines', () => {
    expect(longFiles(['functions'], ['lib'], ['bin'], ['scripts'])).toEqual([]);
  });

  it('has no import cycle in functions/, type-only imports included: each module can be read before those that use it', () => {
    const graph = new Map<string, string[]>();
    for (const file of filesUnder(join(ROOT, 'functions'))) {
      const imported = ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles;
      const local = imported.filter((ref) => ref.fileName.startsWith('.')).map((ref) => resolve(dirname(file), ref.fileName));
      graph.set(
        file,
        local.flatMap((base) => [`${base}.ts`, join(base, 'index.ts')].filter((candidate) => existsSync(candidate)).slice(0, 1)),
      );
    }
    // a walk from each module: a cycle is an import path that comes back to a module still being walked
    const cycles: string[] = [];
    const state = new Map<string, 'walking' | 'done'>();
    const walk = (file: string, path: string[]): void => {
      state.set(file, 'walking');
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === 'walking')
          cycles.push([...path.slice(path.indexOf(next)), next].map((one) => relative(ROOT, one)).join(' -> '));
        else if (!state.has(next)) walk(next, [...path, next]);
      }
      state.set(file, 'done');
    };
    for (const file of graph.keys()) if (!state.has(file)) walk(file, [file]);
    expect(cycles).toEqual([]);
  });

  /** The relative imports of the files of a folder of functions/, each with the file that makes it. */
  const importsOf = (folder: string): Array<{ file: string; imported: string }> =>
    filesUnder(join(ROOT, 'functions', folder)).flatMap((file) =>
      ts
        .preProcessFile(readFileSync(file, 'utf8'), true, true)
        .importedFiles.map((ref) => ({ file: relative(ROOT, file), imported: ref.fileName })),
    );

  it("keeps moderation's policy out of the imaging: no imaging file imports moderation", () => {
    expect(importsOf('imaging').filter(({ imported }) => /\/moderation\//.test(imported))).toEqual([]);
  });

  it("keeps the fingerprint arithmetic on pixels: it loads no image library, nothing but its own files and the core's", () => {
    const outside = importsOf('fingerprint').filter(({ file, imported }) => {
      if (!imported.startsWith('.')) return true;
      const target = relative(join(ROOT, 'functions'), resolve(dirname(join(ROOT, file)), imported));
      return !/^(fingerprint\/|core\/(turns|moderation\/pdq-hash)$)/.test(target);
    });
    expect(outside).toEqual([]);
  });

  it('passes no on... callback anywhere in functions/: later work is a promise, or an event on a target', () => {
    const found: string[] = [];
    const visit = (file: string, node: ts.Node): void => {
      if (ts.isParameter(node) && /^on[A-Z]/.test(node.name.getText()))
        found.push(`${relative(ROOT, file)} ${node.name.getText()}`);
      if (ts.isPropertySignature(node) && /^on[A-Z]/.test(node.name.getText()) && node.type && ts.isFunctionTypeNode(node.type))
        found.push(`${relative(ROOT, file)} ${node.name.getText()}`);
      ts.forEachChild(node, (child) => visit(file, child));
    };
    for (const file of filesUnder(join(ROOT, 'functions')).filter((one) => !one.includes('/generated/')))
      visit(file, parsed(file));
    expect(found).toEqual([]);
  });

  it('computes every query budget from the table of views: no number of queries kept by hand', () => {
    const kept = filesUnder(join(ROOT, 'functions')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\b([A-Z_]*QUERIES[A-Z_]*)\s*=\s*\d/g)].map(
        (match) => `${relative(ROOT, file)}: ${match[1]}`,
      ),
    );
    expect(kept).toEqual([]);
  });

  it('turns errors into answers in one place of the router, by what was thrown: no cell changed as the route goes', () => {
    const router = readFileSync(join(ROOT, 'functions', 'http', 'router.ts'), 'utf8');
    expect(router.match(/\bcatch\b/g) ?? []).toHaveLength(1);
    // answers of errors are made by the router's answerOf alone (and the handler's last resort, before any router)
    const answering = filesUnder(join(ROOT, 'functions'))
      .filter((file) =>
        /\berror(Page)?Response\(/.test(readFileSync(file, 'utf8').replace(/export function error(Page)?Response\(/g, '')),
      )
      .map((file) => relative(ROOT, file));
    expect(answering.sort()).toEqual(['functions/http/responses.ts', 'functions/http/router.ts', 'functions/roots/handler.ts']);
    // a route says how its errors are answered by what it throws, never by a mutable cell the handler changes
    expect(router).not.toMatch(/answering\.as\s*=|\.format\s*=|given\.key\s*=/);
  });

  it('drops no error without a name: no bare .catch(() => undefined) in the upload', () => {
    const text = filesUnder(join(ROOT, 'functions', 'core', 'upload'))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    expect(text.match(/\.catch\(\(\) => undefined\)/g) ?? []).toHaveLength(0);
  });
});
