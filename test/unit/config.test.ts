import { loadConfig } from '../../functions/config';

const REQUIRED = { BUCKET_NAME: 'b', TABLE_NAME: 't', PUBLIC_URL: 'https://img.example.test/' };

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig(REQUIRED);
    expect(config).toMatchObject({
      publicUrl: 'https://img.example.test',
      parameters: { apiKey: '/image-upload/api-key', floodLimits: '/image-upload/flood-limits', idSalt: '/image-upload/id-salt' },
      parametersCacheSeconds: 30,
      moderationCacheSeconds: 30,
      timeZone: 'UTC',
      maxUploadBytes: 10_000_000,
      maxPixels: 100_000_000,
      maxFrames: 300,
      thumbSize: 320,
      mediumWidth: 500,
      naming: 'original',
      duplicates: 'return-existing',
      idPadding: 999,
      forcedExpirationSeconds: undefined,
      corsOrigins: [],
      keepMetadata: false,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads settings and lists every problem at once', () => {
    expect(
      loadConfig({
        ...REQUIRED,
        FORCED_EXPIRATION: 'P1D',
        CORS_ORIGINS: 'https://a.test, https://b.test',
        PARAMETER_PREFIX: '/x/',
      }),
    ).toMatchObject({
      forcedExpirationSeconds: 86400,
      corsOrigins: ['https://a.test', 'https://b.test'],
      parameters: { apiKey: '/x/api-key' },
    });
    let message = '';
    try {
      loadConfig({
        PUBLIC_URL: 'ftp://x',
        THUMB_SIZE: 'big',
        NAMING: 'clever',
        TIME_ZONE: 'Mars/Base',
        FORCED_EXPIRATION: 'later',
      });
    } catch (error) {
      message = (error as Error).message;
    }
    for (const name of ['BUCKET_NAME', 'TABLE_NAME', 'PUBLIC_URL', 'THUMB_SIZE', 'NAMING', 'TIME_ZONE', 'FORCED_EXPIRATION'])
      expect(message).toContain(name);
  });

  it("takes a site name of up to 60 characters, none a control character; blank is the host's", () => {
    expect(loadConfig(REQUIRED).siteName).toBeUndefined();
    expect(loadConfig({ ...REQUIRED, SITE_NAME: '  ' }).siteName).toBeUndefined();
    expect(loadConfig({ ...REQUIRED, SITE_NAME: 'Pix & Co' }).siteName).toBe('Pix & Co');
    expect(loadConfig({ ...REQUIRED, SITE_NAME: 'x'.repeat(60) }).siteName).toHaveLength(60);
    for (const bad of ['x'.repeat(61), 'two\nlines', 'bell\u0007'])
      expect(() => loadConfig({ ...REQUIRED, SITE_NAME: bad })).toThrow('SITE_NAME must be up to 60 characters');
  });

  it('takes the digest of the deployed origin secret only as SHA-256 hex', () => {
    const digest = 'ab'.repeat(32);
    expect(loadConfig({ ...REQUIRED, ORIGIN_SECRET_SHA256: digest }).originSecretSha256).toBe(digest);
    expect(loadConfig(REQUIRED).originSecretSha256).toBeUndefined();
    expect(() => loadConfig({ ...REQUIRED, ORIGIN_SECRET_SHA256: 'AB'.repeat(32) })).toThrow(
      /ORIGIN_SECRET_SHA256 must be a SHA-256 digest in lowercase hex/,
    );
  });

  it('refuses a setting of an earlier version, naming what replaced it, rather than ignoring it', () => {
    expect(() => loadConfig({ ...REQUIRED, KEY_CACHE_SECONDS: '30' })).toThrow(
      'KEY_CACHE_SECONDS is no longer read: use PARAMETERS_CACHE_SECONDS or MODERATION_CACHE_SECONDS',
    );
    expect(() => loadConfig({ ...REQUIRED, FLOOD_LIMITS_CACHE_SECONDS: '' })).toThrow(
      'FLOOD_LIMITS_CACHE_SECONDS is no longer read: use PARAMETERS_CACHE_SECONDS',
    );
    expect(loadConfig({ ...REQUIRED, PARAMETERS_CACHE_SECONDS: '0', MODERATION_CACHE_SECONDS: '300' })).toMatchObject({
      parametersCacheSeconds: 0,
      moderationCacheSeconds: 300,
    });
  });
});
