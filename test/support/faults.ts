import { S3Client } from '@aws-sdk/client-s3';

/** The base class every AWS SDK v3 client's `send` comes from (S3, DynamoDB and its document client, SSM...). */
type Sendable = { send: (this: unknown, command: unknown, ...rest: unknown[]) => Promise<unknown> };
const base = Object.getPrototypeOf(S3Client.prototype) as Sendable;

export interface FaultInjector {
  /** Every SDK call made since install, by what it is (`callOf`). */
  calls: string[];
  restore(): void;
}

/** A command's input, as far as `callOf` reads it. */
type CallInput = {
  Item?: { pk?: unknown };
  Key?: unknown;
  RequestItems?: Record<string, { Keys?: Array<{ pk?: unknown }> }>;
  TransactItems?: Array<Record<string, { Item?: { pk?: unknown }; Key?: { pk?: unknown } }>>;
  Name?: string;
  Names?: string[];
};

/** The kind of a table item by its partition key: `IMG#42` is `IMG#`, `BANS` itself. */
const itemKind = (pk: unknown): string => String(pk).replace(/#.*/s, '#');

/**
 * A call by what it is: `Client:Command`, then what it is about (the kinds of the table items, whether an object is
 * an original or a rendition, the parameters' names), so that calls made at once, whose order depends on timing, are
 * told apart by what they do rather than by their place among the others.
 */
export function callOf(client: unknown, command: unknown): string {
  const name = `${(client as object).constructor.name}:${(command as object).constructor.name}`;
  const input = (command as { input?: CallInput }).input ?? {};
  const kinds = (pks: unknown[]): string => [...new Set(pks.map(itemKind))].sort().join('+');
  let about: string | undefined;
  if (typeof input.Key === 'string')
    about = /\.th\.[^./]+$/.test(input.Key) ? 'thumb' : /\.md\.[^./]+$/.test(input.Key) ? 'medium' : 'object';
  else if (input.Item?.pk !== undefined) about = itemKind(input.Item.pk);
  else if (input.Key && typeof input.Key === 'object' && 'pk' in input.Key) about = itemKind(input.Key.pk);
  else if (input.RequestItems)
    about = kinds(Object.values(input.RequestItems).flatMap((table) => (table.Keys ?? []).map((key) => key.pk)));
  else if (input.TransactItems)
    about = kinds(input.TransactItems.flatMap((item) => Object.values(item).map((one) => one.Item?.pk ?? one.Key?.pk)));
  else if (input.Names) about = input.Names.map((one) => one.split('/').pop()).join('+');
  else if (input.Name) about = input.Name.split('/').pop();
  return about === undefined ? name : `${name} ${about}`;
}

/**
 * Installs `handle` in front of every SDK call (`send`), with the call's index and what it is (`callOf`); its calls
 * list and restore are the injector's. The emulators cannot fail on demand, so this is where the SDK is intercepted.
 */
function interceptSends(
  handle: (client: unknown, index: number, call: string, send: () => Promise<unknown>) => Promise<unknown>,
): FaultInjector {
  const original = base.send;
  const calls: string[] = [];
  base.send = function (this: unknown, command: unknown, ...rest: unknown[]): Promise<unknown> {
    const call = callOf(this, command);
    calls.push(call);
    return handle(this, calls.length - 1, call, () => original.call(this, command, ...rest));
  };
  return {
    calls,
    restore: () => {
      base.send = original;
    },
  };
}

/**
 * A call by what it is (`callOf`) and which of the calls alike it is: the `nth` (0-based) since the injector was
 * installed. Calls made at once (the claims, the puts, the reads of a cold start) come in an order that depends on
 * timing, so a fault is aimed at a call by what it is, never by its place among all the calls.
 */
export interface CallRef {
  call: string;
  nth: number;
}

/** Each call of a recorded list as the `CallRef` that names it. */
export function callRefs(calls: readonly string[]): CallRef[] {
  const seen = new Map<string, number>();
  return calls.map((call) => {
    const nth = seen.get(call) ?? 0;
    seen.set(call, nth + 1);
    return { call, nth };
  });
}

const sameCall = (a: CallRef, b: CallRef | undefined): boolean => a.call === b?.call && a.nth === b.nth;

/**
 * Makes SDK calls fail as a store outage would, at the adapter's edge: each call of `fail`; with `failFrom`, that call
 * and every call made after it (a number: from that many calls on, 0 for all); with `failAfter`, every call made after
 * that one; `answerLostOf`: that call is carried out, then answered as failed. `injected` names the calls a fault was
 * injected in. The other calls go to the emulators as usual. Failing `send` itself skips the SDK's retries, as if
 * they all failed.
 */
export function injectFaults(
  plan: { fail?: CallRef[]; failFrom?: number | CallRef; failAfter?: CallRef; answerLostOf?: CallRef } = {},
): FaultInjector & { injected: string[] } {
  const seen = new Map<string, number>();
  const injected: string[] = [];
  let outage = false;
  const interceptor = interceptSends((_client, index, call, send) => {
    const ref = { call, nth: seen.get(call) ?? 0 };
    seen.set(call, ref.nth + 1);
    if (typeof plan.failFrom === 'number' ? index >= plan.failFrom : sameCall(ref, plan.failFrom)) outage = true;
    const fault = (): Error => {
      injected.push(`${call} #${ref.nth}`);
      return Object.assign(new Error(`injected fault in ${call} #${ref.nth}`), {
        name: 'InternalServerError',
        $fault: 'server',
        $metadata: { httpStatusCode: 500 },
      });
    };
    const failing = outage || (plan.fail ?? []).some((one) => sameCall(ref, one));
    if (sameCall(ref, plan.failAfter)) outage = true;
    if (failing) return Promise.reject(fault());
    // the call reaches the store and is carried out, but its answer is lost (a timeout, a broken connection)
    if (sameCall(ref, plan.answerLostOf)) return send().then(() => Promise.reject(fault()));
    return send();
  });
  return { ...interceptor, injected };
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
