import { buildApp } from '../lib/app';
import { ContextError } from '../lib/function-context';

try {
  buildApp();
} catch (error) {
  // a value the operator gave (`-c key=value`, `cdk.json`): every problem in their words, without a stack trace
  if (!(error instanceof ContextError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
