/**
 * Counts the turns of the event loop from now on (a callback queued with `setImmediate` each turn), so that a test can
 * tell which turn something happened in; `stop` ends the count.
 */
export function countTurns(): { turn: () => number; stop: () => void } {
  let turn = 0;
  let ticking = true;
  const tick = (): void => {
    turn += 1;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  return { turn: () => turn, stop: () => void (ticking = false) };
}
