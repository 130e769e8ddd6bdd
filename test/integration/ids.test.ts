import { cryptoRandom } from '../../functions/adapters/crypto-random';
import type { RandomSource } from '../../functions/core/ports';
import { makePng } from '../support/images';
import { createTestService, jsonBody, multipartUpload, type TestService } from '../support/test-service';

async function uploadIds(service: TestService, count: number, first = 0): Promise<Array<{ id: number; encoded: string }>> {
  const codec = await service.idCodec();
  const ids: Array<{ id: number; encoded: string }> = [];
  for (let index = first; index < first + count; index += 1) {
    const response = await service.send(
      multipartUpload({ key: service.apiKey, source: { bytes: await makePng(10 + index, 7), filename: `i${index}.png` } }),
    );
    const encoded = String(jsonBody(response).image['id_encoded']);
    ids.push({ id: codec.decode(encoded) ?? 0, encoded });
  }
  return ids;
}

describe('ids', () => {
  it('draws ids at random from 2^53 by default: none near another, none from a counter', async () => {
    const service = await createTestService();
    const ids = await uploadIds(service, 40);
    const sorted = ids.map(({ id }) => id).sort((a, b) => a - b);
    for (let index = 1; index < sorted.length; index += 1) {
      expect((sorted[index] ?? 0) - (sorted[index - 1] ?? 0)).toBeGreaterThan(1_000_000);
    }
    expect(sorted[0]).toBeGreaterThan(2 ** 32);
    // With the default padding (999) an id drawn from 2^53 encodes to 10 characters or more but for 0.15% of draws,
    // and to 8 or fewer for 2.4e-5 of them: one run in a thousand holds one such id, so one is let pass (two: 5e-7).
    expect(ids.filter(({ encoded }) => encoded.length < 9).length).toBeLessThanOrEqual(1);
    expect(ids.filter(({ encoded }) => encoded.length >= 10).length).toBeGreaterThan(30);
    expect(await service.items('COUNTER#')).toEqual([]);
  });

  it("counts ids up from 1 with ID_SCHEME=sequential (Chevereto's counter)", async () => {
    const service = await createTestService({ ID_SCHEME: 'sequential' });
    expect((await uploadIds(service, 3)).map(({ id }) => id)).toEqual([1, 2, 3]);
  });

  it('draws again when the id drawn belongs to a stored image, leaving that image as it was', async () => {
    const draws: number[] = [];
    const random: RandomSource = { hex: cryptoRandom.hex, safeInteger: () => draws.shift() ?? cryptoRandom.safeInteger() };
    const service = await createTestService({}, { random });
    draws.push(4_242_424_242_424);
    const [first] = await uploadIds(service, 1);
    expect(first?.id).toBe(4_242_424_242_424);
    const before = await service.item(`IMG#${first?.id}`);
    draws.push(4_242_424_242_424, 5_151_515_151_515);
    const [second] = await uploadIds(service, 1, 1);
    expect(second?.id).toBe(5_151_515_151_515);
    expect(await service.item(`IMG#${first?.id}`)).toEqual(before);
  });
});

describe('cryptoRandom.safeInteger', () => {
  it('draws positive safe integers spread over the whole range', () => {
    const draws = Array.from({ length: 2000 }, () => cryptoRandom.safeInteger());
    for (const value of draws) expect(Number.isSafeInteger(value) && value > 0).toBe(true);
    expect(new Set(draws).size).toBe(draws.length);
    // half of them fall in the top half of the range, about
    const high = draws.filter((value) => value > Number.MAX_SAFE_INTEGER / 2).length;
    expect(high).toBeGreaterThan(850);
    expect(high).toBeLessThan(1150);
  });
});
