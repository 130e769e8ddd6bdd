import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The API asset's last bundling step, in Node (any OS): checked on a bundle folder made here. */
const SCRIPT = join(__dirname, '..', '..', '..', 'scripts', 'bundling', 'finish-api-bundle.cjs');
const BINARIES = 'node_modules/onnxruntime-node/bin/napi-v6';

function bundleFolder(packages: string[]): { dir: string; model: string } {
  const dir = mkdtempSync(join(tmpdir(), 'bundle-'));
  for (const name of packages) {
    mkdirSync(join(dir, 'node_modules', '@img', name), { recursive: true });
    writeFileSync(join(dir, 'node_modules', '@img', name, 'package.json'), '{}');
  }
  for (const platform of ['darwin/arm64', 'win32/x64', 'linux/x64', 'linux/arm64'])
    mkdirSync(join(dir, BINARIES, platform), { recursive: true });
  const model = join(dir, 'model.onnx');
  writeFileSync(model, 'model');
  return { dir, model };
}

const run = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });

describe('finishing the API bundle', () => {
  const made: string[] = [];
  afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it("puts the model beside index.js and keeps only Linux arm64's onnxruntime binaries", () => {
    const { dir, model } = bundleFolder(['sharp-linux-arm64', 'sharp-libvips-linux-arm64']);
    made.push(dir);
    const result = run(dir, model, BINARIES);
    expect([result.status, result.stderr]).toEqual([0, '']);
    expect(existsSync(join(dir, 'models', 'model.onnx'))).toBe(true);
    expect(readdirSync(join(dir, BINARIES))).toEqual(['linux']);
    expect(readdirSync(join(dir, BINARIES, 'linux'))).toEqual(['arm64']);
  });

  it("fails the synth, naming the cause, when npm installed another platform's sharp", () => {
    const { dir, model } = bundleFolder(['sharp-linux-x64', 'sharp-libvips-linux-x64']);
    made.push(dir);
    const result = run(dir, model, BINARIES);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('lacks @img/sharp-linux-arm64 and @img/sharp-libvips-linux-arm64');
    expect(result.stderr).toContain('Node >= 20.12');
    expect(run(dir).status).toBe(2);
  });
});
