import { everyCoefficientRefinedJpeg, gifWithHugeScreen } from '../support/expensive-images';
import { createTestService, jsonBody, multipartUpload } from '../support/test-service';

describe('expensive images through the handler', () => {
  it('answers 413, code 615, storing nothing, for a JPEG with 883 scans', async () => {
    const service = await createTestService();
    const response = await service.send(
      multipartUpload({ key: service.apiKey, source: { bytes: everyCoefficientRefinedJpeg(2000, 2000), filename: 'scans.jpg' } }),
    );
    expect(response.statusCode).toBe(413);
    expect(JSON.parse(response.body)).toEqual({
      status_code: 413,
      error: { message: 'Image too complex - max 100 JPEG scans', code: 615 },
      status_txt: 'Payload Too Large',
    });
    expect(await service.objectKeys()).toEqual([]);
    expect(await service.items('IMG#')).toEqual([]);
  });

  it('answers the size browsers will use for a GIF whose screen is huge around a 1x1 frame', async () => {
    const service = await createTestService();
    const response = await service.send(
      multipartUpload({ key: service.apiKey, source: { bytes: gifWithHugeScreen(20000, 20000), filename: 'screen.gif' } }),
    );
    expect(response.statusCode).toBe(200);
    const image = jsonBody(response).image;
    expect([image['width'], image['height']]).toEqual([1, 1]);
  });
});
