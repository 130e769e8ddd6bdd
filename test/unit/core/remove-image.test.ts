import type { ImageRecord, PurgeRequest } from '../../../functions/core/ports';
import { removeImage, type RemovalDeps } from '../../../functions/core/lifecycle/remove-image';

const file = (key: string) => ({ key, width: 1, height: 1, size: 1, mime: 'image/png', extension: 'png', bits: 8, channels: 3 });
const record = {
  id: 7,
  original: { ...file('images/2026/11/22/a.png'), md5: 'x' },
  thumb: file('images/2026/11/22/a.th.png'),
  medium: file('images/2026/11/22/a.md.png'),
  status: 'active',
  fingerprint: { clientIp: 'ip', md5: 'md5', width: undefined },
} as unknown as ImageRecord;

function recordingDeps(purge: (request: PurgeRequest) => Promise<unknown>): { deps: RemovalDeps; calls: string[] } {
  const calls: string[] = [];
  const deps = {
    objects: {
      deleteMany: async (keys: readonly string[]) => void calls.push(`objects ${keys.join(',')}`),
      put: async () => undefined,
    },
    duplicates: {
      releaseImage: async (fingerprint: { clientIp: string; md5: string }, id: number) =>
        void calls.push(`duplicate ${fingerprint.clientIp} ${fingerprint.md5} ${id}`),
    },
    images: {
      remove: async (id: number) => {
        calls.push(`record ${id}`);
        return true;
      },
    },
    purger: {
      purge: async (request: PurgeRequest) => {
        calls.push(`purge ${request.keys.join(',')}`);
        await purge(request);
        return request.keys.length;
      },
    },
    logger: { info: () => undefined, warn: (message: string) => void calls.push(`warn ${message}`), error: () => undefined },
  } as unknown as RemovalDeps;
  return { deps, calls };
}

describe('removeImage', () => {
  it('removes the objects and the duplicate entry, purges the CDN, then removes the record, in that order', async () => {
    const { deps, calls } = recordingDeps(async () => undefined);
    await removeImage(deps, record);
    const keys = 'images/2026/11/22/a.png,images/2026/11/22/a.th.png,images/2026/11/22/a.md.png';
    expect(calls).toEqual([`objects ${keys}`, 'duplicate ip md5 7', `purge ${keys}`, 'record 7']);
  });

  it('still succeeds when the purge is refused, keeping the record for the sweep to purge again', async () => {
    const { deps, calls } = recordingDeps(async () => {
      throw new Error('throttled');
    });
    await expect(removeImage(deps, record)).resolves.toBeUndefined();
    expect(calls.some((call) => call.startsWith('record'))).toBe(false);
    expect(calls[calls.length - 1]).toMatch(/^warn CDN purge/);
  });
});
