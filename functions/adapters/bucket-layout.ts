import { IMAGES_PREFIX } from '../core/image/links';

/**
 * The bucket's places: the stored files under `images/` (the only prefix CloudFront serves), the two-step upload's
 * bytes under `staging/` (written through presigned URLs, read and removed by the function, and expired by a
 * lifecycle rule within a day), and the operator's lists under `moderation/` (the blocked pictures: the function only
 * reads them). The stack gives the function rights on these and nothing else.
 */
export const BUCKET_LAYOUT = {
  imagesPrefix: IMAGES_PREFIX,
  stagingPrefix: 'staging/',
  moderationPrefix: 'moderation/',
  /** Days after which the lifecycle rule removes a staged object nobody finished. */
  stagingExpirationDays: 1,
} as const;
