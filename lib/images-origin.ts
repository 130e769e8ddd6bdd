import { Aws } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';

/**
 * The bucket as the distribution's origin for one prefix, through an origin access control: the distribution may
 * read the files under that prefix and nothing else of the bucket (`staging/` and `moderation/` stay private), and
 * may list the bucket, so that a missing file answers 404 rather than 403 (S3 hides what the reader may not list).
 * The listing cannot be asked for through the distribution: the origin serves only paths under the prefix, and no
 * query string reaches it. (CDK's `withOriginAccessControl` grants the whole bucket.)
 */
export class PrefixOrigin extends origins.S3BucketOrigin {
  constructor(
    private readonly bucket: s3.IBucket,
    private readonly prefix: string,
    private readonly accessControlName: string,
  ) {
    super(bucket);
  }

  override bind(scope: Construct, options: cloudfront.OriginBindOptions): cloudfront.OriginBindConfig {
    // the id CDK's own origin gives it: the deployed access control keeps its logical id
    const accessControl = new cloudfront.S3OriginAccessControl(scope, 'S3OriginAccessControl', {
      originAccessControlName: this.accessControlName,
    });
    const distribution = `arn:${Aws.PARTITION}:cloudfront::${Aws.ACCOUNT_ID}:distribution/${options.distributionId}`;
    const { statementAdded } = this.bucket.addToResourcePolicy(
      new iam.PolicyStatement({
        effect: iam.Effect.ALLOW,
        principals: [new iam.ServicePrincipal('cloudfront.amazonaws.com')],
        actions: ['s3:GetObject', 's3:ListBucket'],
        resources: [this.bucket.arnForObjects(`${this.prefix}*`), this.bucket.bucketArn],
        conditions: { StringEquals: { 'AWS:SourceArn': distribution } },
      }),
    );
    if (!statementAdded) throw new Error("the images' bucket policy could not be written (an imported bucket?)");
    const { originProperty, ...config } = this._bind(scope, options);
    if (!originProperty) throw new Error("CDK's S3 origin rendered no origin");
    return { ...config, originProperty: { ...originProperty, originAccessControlId: accessControl.originAccessControlId } };
  }
}
