import type { Node } from 'constructs';
import { ConfigError, loadConfig } from '../functions/config';
import { contextKeyOf, REPLACED_SETTINGS } from '../functions/settings-table';
import { CONTEXT_SETTINGS, DEPLOYMENT_CONTEXT, parameterPrefixOf } from './settings';

/**
 * The CDK context as the stack reads it: the function's settings among its keys (checked by the Lambda's own
 * `loadConfig`, each mistake said by the key the operator typed), and the keys it does not read at all.
 */

/** Context values the stack cannot use: every problem, each in the operator's words (`context thumbSize ...`). */
export class ContextError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid context:\n- ${problems.join('\n- ')}`);
    this.name = 'ContextError';
  }
}

/** The function's settings from context, checked with the very function the Lambda runs at cold start. */
export function functionSettings(
  text: (key: string) => string | undefined,
  stackName: string,
): {
  functionEnv: Record<string, string>;
  parameterPrefix: string;
} {
  const functionEnv: Record<string, string> = {};
  for (const { key, name } of CONTEXT_SETTINGS) {
    const value = text(key);
    if (value !== undefined) functionEnv[name] = value;
  }
  functionEnv['PARAMETER_PREFIX'] ??= parameterPrefixOf(stackName);
  const problems: string[] = [];
  for (const [name, replacements] of Object.entries(REPLACED_SETTINGS)) {
    if (text(contextKeyOf(name)) !== undefined)
      problems.push(`context ${contextKeyOf(name)} is no longer read: use ${replacements.map(contextKeyOf).join(' or ')}`);
  }
  let config: ReturnType<typeof loadConfig> | undefined;
  try {
    config = loadConfig({
      ...functionEnv,
      BUCKET_NAME: 'synth-check',
      TABLE_NAME: 'synth-check',
      PUBLIC_URL: 'https://synth.check',
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // said in the operator's words: the context key typed (`thumbSize`), not the variable it sets (`THUMB_SIZE`)
    problems.push(...error.problems.map(inContextWords));
  }
  if (problems.length > 0 || !config) throw new ContextError(problems);
  return { functionEnv, parameterPrefix: config.parameters.apiKey.replace(/\/api-key$/, '') };
}

/** A setting's problem as `loadConfig` says it (`THUMB_SIZE must be ...`), with each variable named by its context key. */
function inContextWords(problem: string): string {
  return CONTEXT_SETTINGS.reduce(
    (text, { key, name }) => text.replace(new RegExp(`\\b${name}\\b`, 'g'), `context ${key}`),
    problem,
  );
}

/**
 * Context keys given that the stack does not read (a misspelled `thumbsize`), each with the key it may have meant.
 * CDK's own keys (feature flags `@aws-cdk/...`, `aws:cdk:...`, lookups `name:account=...`) are not the stack's to judge.
 */
export function unknownKeys(node: Node): string[] {
  const known = [
    ...CONTEXT_SETTINGS.map(({ key }) => key),
    ...Object.keys(DEPLOYMENT_CONTEXT),
    ...Object.keys(REPLACED_SETTINGS).map(contextKeyOf),
  ];
  const cdks = (key: string): boolean => key.startsWith('@') || key.includes(':') || CDK_KEYS.has(key);
  return Object.keys(node.getAllContext() as Record<string, unknown>)
    .filter((key) => !known.includes(key) && !cdks(key))
    .map((key) => {
      const meant = known.find((one) => one.toLowerCase().replace(/[-_]/g, '') === key.toLowerCase().replace(/[-_]/g, ''));
      return `context ${key} is not one the stack reads${meant ? `: did you mean ${meant}?` : ' (docs/settings.md lists them)'}`;
    });
}

/** Keys of the CDK CLI's own, which it may put in the context. */
const CDK_KEYS: ReadonlySet<string> = new Set(['cli-telemetry', 'acknowledged-issue-numbers', 'notices']);
