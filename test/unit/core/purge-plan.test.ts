import { FOLDER_PURGE_MIN_KEYS, MAX_FOLDER_PURGES, planPurge, purgePaths } from '../../../functions/core/purge-plan';

const keysIn = (folder: string, count: number): string[] =>
  Array.from({ length: count }, (_, index) => `images/${folder}/i${index}.png`);

describe('planPurge', () => {
  it('purges a few files one by one', () => {
    const keys = keysIn('2026/11/23', 6);
    expect(planPurge(keys)).toEqual({ keys, folders: [] });
  });

  it('purges a folder whole once its files would take as many paths, and the rest one by one', () => {
    const crowded = keysIn('2026/11/16', FOLDER_PURGE_MIN_KEYS);
    const few = keysIn('2026/11/20', 3);
    const plan = planPurge([...crowded, ...few, ...few]);
    expect(plan).toEqual({ folders: ['images/2026/11/16/'], keys: few });
    expect(purgePaths(plan)).toBe(4);
  });

  it('purges at most a few folders whole, the largest, whatever the batch', () => {
    const days = Array.from({ length: MAX_FOLDER_PURGES + 2 }, (_, day) =>
      keysIn(`2026/10/${10 + day}`, FOLDER_PURGE_MIN_KEYS + day),
    );
    const plan = planPurge(days.flat());
    expect(plan.folders).toHaveLength(MAX_FOLDER_PURGES);
    expect(plan.folders).not.toContain('images/2026/10/10/');
    expect(plan.folders).not.toContain('images/2026/10/11/');
    expect(plan.keys).toEqual([...(days[0] ?? []), ...(days[1] ?? [])]);
  });
});
