/**
 * Promises an upload starts early and waits for later: a rejection before the wait must not be an unhandled one
 * (Node ends the process for those), and the wait itself sees it.
 */

/** Marks a promise as handled now; whoever awaits it later still gets its rejection. */
export function awaitedLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/** Waits for a promise to settle, whichever way: for work whose outcome was dealt with elsewhere (a decode let finish). */
export async function settled(promise: Promise<unknown>): Promise<void> {
  await promise.then(
    () => undefined,
    () => undefined,
  );
}

/** A promise with its resolve and reject at hand, for a value that a callback delivers; settling it again changes nothing. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (reason: unknown) => void } {
  let resolve: (value: T) => void = () => undefined;
  let reject: (reason: unknown) => void = () => undefined;
  const promise = new Promise<T>((settle, fail) => {
    resolve = settle;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/**
 * A promise's value when it has settled by now (its callbacks run before the event loop turns), else `otherwise`: for
 * work that may use a value but must not wait for it. A rejection counts as `otherwise`.
 */
export function valueNowOr<T>(promise: Promise<T>, otherwise: T): Promise<T> {
  const fallback = promise.catch(() => otherwise);
  return Promise.race([fallback, new Promise<T>((resolve) => setImmediate(() => resolve(otherwise)))]);
}
