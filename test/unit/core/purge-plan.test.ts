import fc from 'fast-check';
import { planPurge, PURGE_PATHS_PER_RUN, purgePaths } from '../../../functions/core/lifecycle/purge-plan';

const keysIn = (folder: string, count: number): string[] =>
  Array.from({ length: count }, (_, index) => `images/${folder}/i${index}.png`);

/** Whether the purge reaches the key: the key itself, or a folder above it. */
const covers = (plan: { keys: string[]; folders: string[] }, key: string): boolean =>
  plan.keys.includes(key) || plan.folders.some((folder) => key.startsWith(folder));

describe('planPurge', () => {
  it('purges files one by one while they fit in a run', () => {
    const keys = keysIn('2026/11/23', PURGE_PATHS_PER_RUN);
    expect(planPurge(keys)).toEqual({ keys, folders: [] });
  });

  it('purges the day folder whole once its files would take more paths than a run sends', () => {
    const plan = planPurge(keysIn('2026/11/23', PURGE_PATHS_PER_RUN + 1));
    expect(plan).toEqual({ keys: [], folders: ['images/2026/11/23/'] });
  });

  it('purges the fullest day folders first, and keeps the rest one by one', () => {
    const full = keysIn('2026/11/16', 5);
    const few = keysIn('2026/11/20', 3);
    const plan = planPurge([...full, ...few, ...few]);
    expect(plan).toEqual({ keys: few, folders: ['images/2026/11/16/'] });
    expect(purgePaths(plan)).toBe(4);
  });

  it('goes up to the month, then to all images, when days alone do not fit', () => {
    const month = Array.from({ length: 10 }, (_, day) => keysIn(`2026/10/${10 + day}`, 3)).flat();
    expect(planPurge(month)).toEqual({ keys: [], folders: ['images/2026/10/'] });
    const years = Array.from({ length: 8 }, (_, year) => keysIn(`${2019 + year}/01/01`, 1)).flat();
    expect(planPurge(years)).toEqual({ keys: [], folders: ['images/'] });
  });

  it('never sends more paths than a run may, and always reaches every key (property)', () => {
    const key = fc
      .tuple(fc.integer({ min: 2020, max: 2027 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }), fc.nat(50))
      .map(
        ([year, month, day, n]) => `images/${year}/${String(month).padStart(2, '0')}/${String(day).padStart(2, '0')}/f${n}.png`,
      );
    fc.assert(
      fc.property(fc.array(key, { maxLength: 300 }), fc.integer({ min: 1, max: 10 }), (keys, budget) => {
        const plan = planPurge(keys, budget);
        expect(purgePaths(plan)).toBeLessThanOrEqual(budget);
        for (const one of keys) expect(covers(plan, one)).toBe(true);
        // no coarser than needed: when the keys fit, they go one by one
        if (new Set(keys).size <= budget) expect(plan.folders).toEqual([]);
      }),
    );
  });
});
