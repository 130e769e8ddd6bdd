/**
 * Lets the event loop turn (I/O, timers, other requests) before going on: long work on the request's thread goes in
 * steps of a few ms each, never one block (`docs/imaging.md`, "Bounded work").
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
