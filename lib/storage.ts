import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { BUCKET_LAYOUT } from '../functions/adapters/bucket-layout';
import { TABLE_SCHEMA } from '../functions/adapters/table-schema';
import { acknowledge } from './nag-suppressions';
import type { DeploymentSettings } from './settings';
import { StackPart } from './stack-part';

export type StorageProps = Pick<DeploymentSettings, 'removal' | 'keepDeletedDays'>;

/**
 * The data: the bucket of the files and the table of the records. Their logical ids are the ones they always had (made
 * in the stack's scope, `StackPart`): a resource whose id moved would be replaced, and a new bucket and table would
 * start empty beside the kept ones.
 */
export class Storage extends StackPart {
  readonly bucket: s3.Bucket;
  readonly table: dynamodb.TableV2;

  constructor(scope: Construct, id: string, settings: StorageProps) {
    super(scope, id);
    // retain: the data outlives the stack and every update, but a first deploy that fails removes it, empty as it is
    const removalPolicy = settings.removal === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE;
    this.bucket = new s3.Bucket(this.scope, 'Images', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // a removed or overwritten file stays, as a noncurrent version, for keepDeletedDays: a mistake, a bug or a
      // compromised function's deletes can be undone (docs/operations.md, "Restoring a deleted file"); a takedown
      // removes every version at once
      versioned: true,
      lifecycleRules: [
        { abortIncompleteMultipartUploadAfter: Duration.days(1) },
        { noncurrentVersionExpiration: Duration.days(settings.keepDeletedDays) },
        // delete markers whose versions have all expired: nothing left to restore
        { expiredObjectDeleteMarker: true },
        // two-step uploads nobody finished: their staged bytes go within a day (the sweep removes them sooner), and
        // are not kept as versions; nor are the block lists an import replaced (up to 32 MB each)
        {
          prefix: BUCKET_LAYOUT.stagingPrefix,
          expiration: Duration.days(BUCKET_LAYOUT.stagingExpirationDays),
          noncurrentVersionExpiration: Duration.days(1),
        },
        { prefix: BUCKET_LAYOUT.moderationPrefix, noncurrentVersionExpiration: Duration.days(1) },
      ],
      removalPolicy,
      autoDeleteObjects: settings.removal === 'destroy',
    });
    acknowledge(
      this.bucket,
      'S1',
      'Objects are read only through CloudFront and written only by the function; S3 access logs would hold CloudFront origin fetches and function writes, which API Gateway access logs and the function logs already record.',
    );
    this.table = new dynamodb.TableV2(this.scope, 'Records', {
      partitionKey: { name: TABLE_SCHEMA.partitionKey, type: dynamodb.AttributeType.STRING },
      billing: dynamodb.Billing.onDemand(),
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      globalSecondaryIndexes: [
        {
          indexName: TABLE_SCHEMA.sweepIndex.name,
          partitionKey: { name: TABLE_SCHEMA.sweepIndex.partitionKey, type: dynamodb.AttributeType.STRING },
          sortKey: { name: TABLE_SCHEMA.sweepIndex.sortKey, type: dynamodb.AttributeType.NUMBER },
          projectionType: dynamodb.ProjectionType.KEYS_ONLY,
        },
      ],
      removalPolicy,
    });
  }
}
