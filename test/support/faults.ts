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
 * Installs `handle` in front of every SDK call (`send`), with the call's index and `Client:Command` name; its calls
 * list and restore are the injector's. The emulators cannot fail on demand, so this is where the SDK is intercepted.
 */
function interceptSends(
  handle: (client: unknown, index: number, name: string, send: () => Promise<unknown>) => Promise<unknown>,
): FaultInjector {
  const original = base.send;
  const calls: string[] = [];
  base.send = function (this: unknown, command: unknown, ...rest: unknown[]): Promise<unknown> {
    const name = `${(this as object).constructor.name}:${(command as object).constructor.name}`;
    calls.push(name);
    return handle(this, calls.length - 1, name, () => original.call(this, command, ...rest));
  };
  return {
    calls,
    restore: () => {
      base.send = original;
    },
  };
}

/**
 * Makes SDK calls fail as a store outage would, at the adapter's edge: the N-th call (0-based) fails (or each of a
 * list), and every call from another on; `answerLostAt`: that call is carried out, then answered as failed, and
 * `answerLostOf` the same for the n-th call (0-based) of a command, wherever calls made at once put it among the
 * others. The calls that do not fail go to the emulators as usual. Failing `send` itself skips the SDK's retries, as
 * if they all failed.
 */
export function injectFaults(
  plan: {
    failAt?: number | number[];
    failFrom?: number;
    answerLostAt?: number;
    answerLostOf?: { command: string; nth: number };
  } = {},
): FaultInjector {
  const failAt = new Set(plan.failAt === undefined ? [] : [plan.failAt].flat());
  let seen = 0;
  return interceptSends((_client, index, name, send) => {
    const named = name === plan.answerLostOf?.command ? seen++ : -1;
    const fault = (): Error =>
      Object.assign(new Error(`injected fault in call ${index} (${name})`), {
        name: 'InternalServerError',
        $fault: 'server',
        $metadata: { httpStatusCode: 500 },
      });
    if (failAt.has(index) || (plan.failFrom !== undefined && index >= plan.failFrom)) return Promise.reject(fault());
    // the call reaches the store and is carried out, but its answer is lost (a timeout, a broken connection)
    if (index === plan.answerLostAt || named === plan.answerLostOf?.nth) return send().then(() => Promise.reject(fault()));
    return send();
  });
}

type Stack = {
  add(middleware: unknown, options: { step: string; name: string; priority?: string }): void;
  remove(name: string): boolean;
};
const LOSE_ANSWER = 'testLoseAnswer';

/**
 * Loses the answer of the first (or `occurrence`-th) DynamoDB `PutItem` (or `UpdateItem`) carried out on a key that
 * starts with `pkPrefix`, below the SDK's retries: the write reaches the store and is carried out, its answer is
 * replaced by a timeout, and the SDK sends it again, as it does when a connection breaks after the request went out.
 * The retry then meets what its first attempt wrote. (A write refused by its condition is answered as usual.)
 */
export function loseFirstAnswer(
  command: 'PutItem' | 'UpdateItem',
  pkPrefix: string,
  occurrence = 1,
): FaultInjector & { lost: boolean } {
  const stacks = new Set<Stack>();
  const state = { lost: false, seen: 0 };
  // the document client's name of the command, and DynamoDB's
  const commandNames = [`${command}Command`, command === 'PutItem' ? 'PutCommand' : 'UpdateCommand'];
  const middleware =
    (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
    async (args: { input?: { Item?: { pk?: { S?: string } }; Key?: { pk?: { S?: string } } } }): Promise<unknown> => {
      // placed last, this middleware sees the HTTP answer itself, before it is read: a refused write's is a 400
      const answer = await next(args);
      const carriedOut = (answer as { response?: { statusCode?: number } }).response?.statusCode === 200;
      const pk = (command === 'PutItem' ? args.input?.Item?.pk?.S : args.input?.Key?.pk?.S) ?? '';
      const matches = carriedOut && commandNames.includes(context.commandName ?? '') && pk.startsWith(pkPrefix);
      if (!state.lost && matches && (state.seen += 1) === occurrence) {
        state.lost = true;
        throw Object.assign(new Error(`injected: the answer of the ${command} of ${pk} was lost`), {
          name: 'TimeoutError',
          $metadata: {},
        });
      }
      return answer;
    };
  const interceptor = interceptSends((client, _index, _name, send) => {
    const stack = (client as { middlewareStack: Stack }).middlewareStack;
    if (!stacks.has(stack)) {
      stacks.add(stack);
      stack.add(middleware, { step: 'deserialize', name: LOSE_ANSWER, priority: 'low' });
    }
    return send();
  });
  return {
    calls: interceptor.calls,
    get lost() {
      return state.lost;
    },
    restore: () => {
      interceptor.restore();
      for (const stack of stacks) stack.remove(LOSE_ANSWER);
    },
  };
}
