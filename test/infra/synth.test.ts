import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runnableCopy } from '../support/bundles';

const ROOT = join(__dirname, '..', '..');

/**
 * The one full `cdk synth` of the run, as an operator's `cdk deploy` does it: the pinned CLI, cdk.json's app, esbuild
 * bundling on this machine (no Docker), sharp's Linux arm64 binary installed into the function's asset by npm, and
 * cdk-nag's checks (the CLI fails on any unacknowledged finding).
 */
describe('cdk synth with bundling', () => {
  let out: string;
  let template: {
    Resources: Record<string, { Type: string; Properties: Record<string, unknown>; Metadata?: Record<string, unknown> }>;
  };

  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'cdk-out-'));
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'aws-cdk', 'bin', 'cdk'), 'synth', '--quiet', '--output', out], {
      cwd: ROOT,
      stdio: 'pipe',
      env: { ...process.env, CDK_DISABLE_VERSION_CHECK: 'true' },
    });
    template = JSON.parse(readFileSync(join(out, 'ImageUpload.template.json'), 'utf8')) as typeof template;
  }, 300_000);

  afterAll(() => rmSync(out, { recursive: true, force: true }));

  function assetOf(logicalIdPrefix: string): string {
    const [, resource] =
      Object.entries(template.Resources).find(
        ([id, r]) => id.startsWith(logicalIdPrefix) && r.Type === 'AWS::Lambda::Function',
      ) ?? [];
    const assetPath = resource?.Metadata?.['aws:asset:path'];
    if (typeof assetPath !== 'string') throw new Error(`no asset for ${logicalIdPrefix}`);
    return join(out, assetPath);
  }

  it('puts sharp and its Linux arm64 binary into the API function asset', () => {
    const asset = assetOf('ApiFunction');
    expect(existsSync(join(asset, 'index.js'))).toBe(true);
    const binaries = readdirSync(join(asset, 'node_modules', '@img', 'sharp-linux-arm64', 'lib'));
    expect(binaries.some((file) => /^sharp-linux-arm64.*\.node$/.test(file))).toBe(true);
    expect(existsSync(join(asset, 'node_modules', '@img', 'sharp-libvips-linux-arm64'))).toBe(true);
  });

  it('bundles the sweep without sharp', () => {
    const asset = assetOf('SweepFunction');
    expect(existsSync(join(asset, 'node_modules'))).toBe(false);
    expect(readFileSync(join(asset, 'index.js'), 'utf8')).not.toContain('sharp-linux');
  });

  it.each(['ApiFunction', 'SweepFunction', 'SetupFunction'])(
    "bundles the AWS SDK into %s, which loads on its own (not the runtime's SDK)",
    (prefix) => {
      const bundle = readFileSync(join(assetOf(prefix), 'index.js'), 'utf8');
      // only the optional signers (SigV4a, CRT), which these calls never use, stay outside
      expect(bundle).not.toMatch(/require\(["']@(aws-sdk\/(?!signature-v4)|smithy\/)/);
      // a copy outside the project, so that nothing but the asset itself can be found
      const copy = runnableCopy(assetOf(prefix));
      try {
        const loaded = execFileSync(
          process.execPath,
          ['-e', `const m = require(${JSON.stringify(join(copy, 'index.js'))}); process.stdout.write(typeof m.handler)`],
          { cwd: tmpdir(), env: { PATH: process.env['PATH'] ?? '', AWS_REGION: 'us-east-1' }, encoding: 'utf8' },
        );
        expect(loaded).toBe('function');
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    },
  );
});
