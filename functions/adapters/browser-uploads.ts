import { PutBucketCorsCommand, type CORSConfiguration, type S3Client } from '@aws-sdk/client-s3';

/** How long a browser may keep the answer to its preflight of a PUT (S3 takes any number; browsers cap it lower). */
const PREFLIGHT_SECONDS = 3000;

/**
 * The bucket's CORS rule for the upload page (`docs/pages.md`): pages of the site's own origin, and no other, may PUT
 * a two-step upload's bytes from a browser, with the `Content-Type` a browser sends with a file. S3's CORS rules are a
 * bucket's, not a prefix's: what keeps a page to `staging/` is that a PUT needs a URL the function presigned, and it
 * presigns only `staging/` keys. The stack's setup step puts this rule (once the distribution's address is known);
 * `npm start` puts it on its stand-in for its own address.
 */
export function browserUploadCors(origin: string): CORSConfiguration {
  return {
    CORSRules: [
      {
        ID: 'upload-page',
        AllowedOrigins: [new URL(origin).origin],
        AllowedMethods: ['PUT'],
        AllowedHeaders: ['content-type'],
        MaxAgeSeconds: PREFLIGHT_SECONDS,
      },
    ],
  };
}

/** Puts the rule on the bucket, in place of any other (S3 keeps one CORS configuration a bucket). */
export async function allowBrowserUploads(s3: S3Client, bucket: string, origin: string): Promise<void> {
  await s3.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: browserUploadCors(origin) }));
}
