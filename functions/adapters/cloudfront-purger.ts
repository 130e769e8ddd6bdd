import { randomUUID } from 'node:crypto';
import { CreateInvalidationCommand, type CloudFrontClient } from '@aws-sdk/client-cloudfront';
import type { CachePurger } from '../core/ports';

/** Invalidates removed files in the CloudFront distribution; does nothing where there is none (local). */
export class CloudFrontPurger implements CachePurger {
  constructor(
    private readonly cloudfront: CloudFrontClient,
    private readonly distributionId: () => Promise<string | undefined>,
  ) {}

  async purge(keys: readonly string[]): Promise<void> {
    const distributionId = await this.distributionId();
    if (!distributionId || keys.length === 0) return;
    await this.cloudfront.send(
      new CreateInvalidationCommand({
        DistributionId: distributionId,
        InvalidationBatch: {
          CallerReference: randomUUID(),
          Paths: { Quantity: keys.length, Items: keys.map((key) => `/${key}`) },
        },
      }),
    );
  }
}
