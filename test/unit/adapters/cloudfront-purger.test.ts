import { CloudFrontClient, CreateInvalidationCommand } from '@aws-sdk/client-cloudfront';
import { CloudFrontPurger } from '../../../functions/adapters/cloudfront-purger';

describe('CloudFrontPurger', () => {
  // There is no CloudFront emulator: the client's send is replaced to see the request it would make.
  it('invalidates every removed key in the distribution, and does nothing without one', async () => {
    const sent: CreateInvalidationCommand[] = [];
    const client = {
      send: (command: CreateInvalidationCommand): Promise<object> => {
        sent.push(command);
        return Promise.resolve({});
      },
    } as unknown as CloudFrontClient;
    const paths = await new CloudFrontPurger(client, async () => 'E123').purge({
      keys: ['images/a.png', 'images/a.th.png'],
      folders: ['images/2026/11/23/'],
    });
    expect(paths).toBe(3);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.input).toMatchObject({
      DistributionId: 'E123',
      InvalidationBatch: { Paths: { Quantity: 3, Items: ['/images/a.png', '/images/a.th.png', '/images/2026/11/23/*'] } },
    });
    expect(await new CloudFrontPurger(client, async () => undefined).purge({ keys: ['images/b.png'], folders: [] })).toBe(0);
    expect(sent).toHaveLength(1);
  });
});
