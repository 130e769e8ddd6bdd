import { spawnSync } from 'node:child_process';

/** cfn-lint is on the machine image (pip); CI must not pass without it, elsewhere a check skips and says so. */
export function cfnLintAvailable(): boolean {
  const probe = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
  if (probe.status === 0) return true;
  if (process.env['CI']) throw new Error('cfn-lint is not installed: CI needs it (pip install cfn-lint)');
  process.stderr.write('cfn-lint is not installed: the template lint is skipped\n');
  return false;
}

/** The errors cfn-lint finds in a template file (its warnings and notes left out), and whether its status agrees. */
export function cfnLintErrors(templateFile: string): { errors: string[]; errorBit: number } {
  const lint = spawnSync('cfn-lint', ['--format', 'parseable', '-t', templateFile], { encoding: 'utf8' });
  // cfn-lint's exit status is a bit field: 2 errors, 4 warnings, 8 informational findings
  return { errors: lint.stdout.split('\n').filter((line) => /:E\d{4}:/.test(line)), errorBit: (lint.status ?? 2) & 2 };
}
