import { ITEM_PREFIX, SINGLE_ITEM } from '../../../functions/adapters/table-schema';

describe('the table layout', () => {
  const prefixes = Object.entries(ITEM_PREFIX);

  it('gives each kind of item a key start no other kind shares or begins with', () => {
    for (const [kind, prefix] of prefixes) {
      for (const [other, otherPrefix] of prefixes) {
        if (kind !== other)
          expect({ kind, other, starts: otherPrefix.startsWith(prefix) }).toEqual({ kind, other, starts: false });
      }
    }
  });

  it("keeps the single items' keys out of every kind's range", () => {
    for (const key of Object.values(SINGLE_ITEM)) {
      expect(prefixes.filter(([, prefix]) => key.startsWith(prefix))).toEqual([]);
    }
  });
});
