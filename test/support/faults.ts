import { S3Client } from '@aws-sdk/client-s3';

/** The base class every AWS SDK v3 client's `send` comes from (S3, DynamoDB and its document client, SSM...). */
type Sendable = { send: (this: unknown, command: unknown, ...rest: unknown[]) => Promise<unknown> };
const base = Object.getPrototypeOf(S3Client.prototype) as Sendable;

export interface FaultInjector {
  /** Every SDK call made since install, as `Client:Command`. */
  calls: string[];
  restore(): void;
}

/**
 * Makes SDK calls fail as a store outage would, at the adapter's edge: the N-th call (0-based) fails (or each of a
 * list), and every call from another on; `answerLostAt`: that call is carried out, then answered as failed. The emulators cannot fail on demand, so this is the one place the SDK is intercepted; the calls
 * that do not fail go to the emulators as usual. Failing `send` itself skips the SDK's retries, as if they all failed.
 */
export function injectFaults(plan: { failAt?: number | number[]; failFrom?: number; answerLostAt?: number } = {}): FaultInjector {
  const failAt = new Set(plan.failAt === undefined ? [] : [plan.failAt].flat());
  const original = base.send;
  const calls: string[] = [];
  base.send = function (this: unknown, command: unknown, ...rest: unknown[]): Promise<unknown> {
    const index = calls.length;
    const name = `${(this as object).constructor.name}:${(command as object).constructor.name}`;
    calls.push(name);
    const fault = (): Error =>
      Object.assign(new Error(`injected fault in call ${index} (${name})`), {
        name: 'InternalServerError',
        $fault: 'server',
        $metadata: { httpStatusCode: 500 },
      });
    if (failAt.has(index) || (plan.failFrom !== undefined && index >= plan.failFrom)) return Promise.reject(fault());
    // the call reaches the store and is carried out, but its answer is lost (a timeout, a broken connection)
    if (index === plan.answerLostAt) return original.call(this, command, ...rest).then(() => Promise.reject(fault()));
    return original.call(this, command, ...rest);
  };
  return {
    calls,
    restore: () => {
      base.send = original;
    },
  };
}
