import { randomUUID } from 'node:crypto';
import { CreateInvalidationCommand, type CloudFrontClient } from '@aws-sdk/client-cloudfront';
import type { CachePurger } from '../core/ports';
import type { PurgeRequest } from '../core/ports';

/**
 * Invalidates removed files in the CloudFront distribution, in one invalidation per request (a key is the path
 * `/images/...`, a folder the wildcard path `/images/.../*`); does nothing where there is no distribution (local).
 */
export class CloudFrontPurger implements CachePurger {
  constructor(
    private readonly cloudfront: CloudFrontClient,
    private readonly distributionId: () => Promise<string | undefined>,
  ) {}

  async purge(request: PurgeRequest): Promise<number> {
    const paths = [
      ...request.keys.map((key) => `/${key}`),
      // a folder is everything under it (`images/2026/11/` -> `/images/2026/11/*`; the top folder `` -> `/*`)
      ...request.folders.map((folder) => (folder === '' ? '/*' : `/${folder.replace(/\/*$/, '/')}*`)),
    ];
    const distributionId = await this.distributionId();
    if (!distributionId || paths.length === 0) return 0;
    await this.cloudfront.send(
      new CreateInvalidationCommand({
        DistributionId: distributionId,
        InvalidationBatch: { CallerReference: randomUUID(), Paths: { Quantity: paths.length, Items: paths } },
      }),
    );
    return paths.length;
  }
}
