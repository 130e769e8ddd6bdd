import { FIRST_VALUES, newApiKey } from '../../../functions/adapters/operator-parameters';

describe('a new API key', () => {
  it('is 32 base64url characters that never begin with - or _ (read as an option after other arguments)', () => {
    // about 1 key in 32 would begin with one of them: 3,000 draws make one certain to have been redrawn
    const keys = Array.from({ length: 3_000 }, newApiKey);
    for (const key of keys) expect(key).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{31}$/);
    expect(new Set(keys).size).toBe(keys.length);
    expect(FIRST_VALUES.apiKey.make()).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{31}$/);
  });
});
