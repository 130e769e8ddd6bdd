import { S3ObjectStore } from '../../functions/adapters/s3-object-store';
import { createSweepHandler } from '../../functions/roots/sweep';
import type { ImageObject } from '../../functions/core/image/image-object';
import { NO_METRICS } from '../../functions/core/metrics';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { inAViewer, laidOn, makeNoise, makePhoto, makePng } from '../support/images';
import { clockAheadBy } from '../support/in-memory';
import { defaultProcessor } from '../../scripts/bench/processor';
import { createTestService, jsonBody, multipartUpload, PUBLIC_URL, adminOf, type TestService } from '../support/test-service';

// the longest tests upload dozens of edits of a picture: about 35 s alone, twice that beside another suite on 2 cores
jest.setTimeout(150_000);

async function upload(service: TestService, seed: number, ip = '203.0.113.5'): Promise<ImageObject> {
  const response = await service.send(
    multipartUpload({ key: service.apiKey, source: { bytes: await makePng(20 + seed, 20), filename: `p${seed}.png` } }),
    ip,
  );
  expect(response.statusCode).toBe(200);
  return jsonBody(response).image as unknown as ImageObject;
}

async function refusal(
  service: TestService,
  seed: number,
  ip: string,
): Promise<{ status: number; code: number; message: string }> {
  const response = await service.send(
    multipartUpload({ key: service.apiKey, source: { bytes: await makePng(20 + seed, 20), filename: 'again.png' } }),
    ip,
  );
  const body = JSON.parse(response.body) as { error?: { code: number; message: string } };
  return { status: response.statusCode, code: body.error?.code ?? 0, message: body.error?.message ?? '' };
}

describe('npm run admin: takedown', () => {
  it.each([
    ['its viewer URL', (image: ImageObject) => image.url_viewer],
    ["a rendition's file URL", (image: ImageObject) => image.thumb.url],
    ['its id_encoded', (image: ImageObject) => image.id_encoded],
  ])('takes an image down by %s: files, record, delete links and viewer all gone', async (_name, reference) => {
    const service = await createTestService();
    const admin = adminOf(service);
    const image = await upload(service, 1);
    // the same bytes again from the same client: one image held by two uploads, two delete links
    const again = await upload(service, 1);
    expect(again.id_encoded).toBe(image.id_encoded);
    // and from another client: another image of the same bytes (duplicates are per client)
    const copy = await upload(service, 1, '198.51.100.20');
    expect(copy.id_encoded).not.toBe(image.id_encoded);
    const kept = await upload(service, 9, '198.51.100.20');
    const done = await admin.takedown(reference(image), { block: false });
    expect(done.idEncoded).toBe(image.id_encoded);
    expect(done.removed.map((removed) => removed.idEncoded)).toEqual([image.id_encoded, copy.id_encoded]);
    expect(done.removed[1]?.clientIp).toBe('198.51.100.20');
    const keptKeys = [kept.url, kept.thumb.url, kept.medium.url].map((url) => new URL(url).pathname.slice(1));
    expect((await service.objectKeys()).sort()).toEqual(keptKeys.sort());
    expect(await service.items('IMG#')).toHaveLength(1);
    for (const gone of [image, copy]) expect((await service.send(new Request(gone.url_viewer))).statusCode).toBe(404);
    expect((await service.send(new Request(kept.url_viewer))).statusCode).toBe(200);
    for (const link of [image.delete_url, again.delete_url, copy.delete_url])
      expect((await service.send(new Request(link, { method: 'POST' }))).statusCode).toBe(404);
    // idempotent: nothing left to take down, said clearly
    await expect(admin.takedown(reference(image), { block: false })).rejects.toThrow(
      /no image .*: unknown, taken down, or removed for good|no image has the file/,
    );
  });

  it('takes down and blocks all the same when the earlier versions cannot be removed, and names the files left', async () => {
    const service = await createTestService();
    const image = await upload(service, 7);
    const refused = jest
      .spyOn(S3ObjectStore.prototype, 'purge')
      .mockRejectedValueOnce(new Error('AccessDenied: s3:DeleteObjectVersion'));
    try {
      await expect(adminOf(service).takedown(image.url, { block: true })).rejects.toThrow(
        /^taken down, but earlier versions of its files are kept \(Error: AccessDenied: s3:DeleteObjectVersion\): remove every version of images\//,
      );
    } finally {
      refused.mockRestore();
    }
    expect((await service.send(new Request(image.url_viewer))).statusCode).toBe(404);
    // blocked before the versions were tried: the same bytes are refused
    expect(await refusal(service, 7, '203.0.113.9')).toMatchObject({ status: 403, code: 151 });
  });

  it('answers unknown references clearly', async () => {
    const admin = adminOf(await createTestService());
    await expect(admin.takedown('zzzzzz', { block: false })).rejects.toThrow(/no image zzzzzz|not an image id/);
    await expect(admin.takedown(`${PUBLIC_URL}/images/2020/01/01/none.png`, { block: false })).rejects.toThrow(
      'no image has the file /images/2020/01/01/none.png',
    );
    await expect(admin.takedown('not a reference!', { block: false })).rejects.toThrow('not an image reference');
    // another host's link names none of this host's images, even with a path and id like ours
    const foreign = 'https://elsewhere.example/image/Ab3dE';
    await expect(admin.takedown(foreign, { block: false })).rejects.toThrow(
      `not a link of this host (${new URL(PUBLIC_URL).host}): ${foreign}`,
    );
    await expect(admin.similar(foreign)).rejects.toThrow('not a link of this host');
  });

  it('with --block, refuses the same bytes uploaded again (403, code 151), from anyone', async () => {
    const service = await createTestService();
    const image = await upload(service, 2);
    const done = await adminOf(service).takedown(image.url, { block: true });
    expect(done.blocked.length).toBeGreaterThan(0);
    expect(await refusal(service, 2, '198.51.100.7')).toEqual({
      status: 403,
      code: 151,
      message: 'This image was taken down and may not be uploaded again',
    });
    expect(await service.objectKeys()).toEqual([]);
    // another picture is welcome (the gradients of upload() are all one picture to the perceptual hash)
    const other = await service.send(
      multipartUpload({ key: service.apiKey, source: { bytes: await makePhoto(3), filename: 'other.jpg' } }),
    );
    expect(other.statusCode).toBe(200);
  });
});

/** Sends a file; answers the status and the error code (0 when stored). */
async function sent(service: TestService, bytes: Buffer, filename: string): Promise<{ status: number; code: number }> {
  const response = await service.send(multipartUpload({ key: service.apiKey, source: { bytes, filename } }), '198.51.100.9');
  const body = JSON.parse(response.body) as { error?: { code: number } };
  return { status: response.statusCode, code: body.error?.code ?? 0 };
}

/** An APP1 segment of its own right after the JPEG's start: another EXIF block, the pixels untouched. */
function withOtherExif(jpeg: Buffer): Buffer {
  const body = Buffer.concat([
    Buffer.from('Exif\0\0', 'latin1'),
    Buffer.from([0x49, 0x49, 0x2a, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
  ]);
  return Buffer.concat([jpeg.subarray(0, 2), Buffer.from([0xff, 0xe1, 0, body.length + 2]), body, jpeg.subarray(2)]);
}

/** A PNG of grey noise, opaque (of 3 or 4 channels): what frames a photo. */
const noise = makeNoise;

/**
 * The cuts and frames PDQ alone does not survive: a crop of a few percent a side or of one or two sides, a frame of
 * noise around it or on one side, and a framed or cut copy turned or mirrored.
 */
async function cropsAndFrames(photo: Buffer): Promise<Record<string, Buffer>> {
  const { width = 0, height = 0 } = await sharp(photo).metadata();
  const edits: Record<string, Buffer> = {};
  // a framed copy turned or mirrored too: its crops are compared as they are, and the blocked crops' turned forms meet them
  const turns: Record<number, [string, (framed: sharp.Sharp) => sharp.Sharp]> = {
    4: ['turned 90°', (framed) => framed.rotate(90)],
    7: ['mirrored', (framed) => framed.flop()],
  };
  for (const percent of [4, 7, 10]) {
    const share = percent / 100;
    const [dx, dy] = [Math.round(width * share), Math.round(height * share)];
    edits[`cropped ${percent}% a side`] = await sharp(photo)
      .extract({ left: dx, top: dy, width: width - 2 * dx, height: height - 2 * dy })
      .jpeg()
      .toBuffer();
    const framed = await sharp(await noise(width + 2 * dx, height + 2 * dy, 3))
      .composite([{ input: photo, left: dx, top: dy }])
      .jpeg()
      .toBuffer();
    edits[`inside a ${percent}% frame of noise`] = framed;
    const [turn, turned] = turns[percent] ?? [];
    if (turn && turned) edits[`inside a ${percent}% frame of noise, ${turn}`] = await turned(sharp(framed)).jpeg().toBuffer();
  }
  // cut from one side, both sides of an axis, or a corner: the blocked crops of those sides meet the upload's own hash,
  // in whichever of its eight turned and mirrored forms
  const cut = (left: number, top: number, right: number, bottom: number): sharp.Sharp => {
    const [dx, dy] = [Math.round(width * left), Math.round(height * top)];
    const [w, h] = [width - dx - Math.round(width * right), height - dy - Math.round(height * bottom)];
    return sharp(photo).extract({ left: dx, top: dy, width: w, height: h });
  };
  edits['cropped 6% on the left only'] = await cut(0.06, 0, 0, 0).jpeg().toBuffer();
  edits['cropped 9% at the bottom only, mirrored'] = await cut(0, 0, 0, 0.09).flop().jpeg().toBuffer();
  edits['cropped 8% on the left and right'] = await cut(0.08, 0, 0.08, 0).jpeg().toBuffer();
  edits['cropped 5% at the top and on the right, turned 90°'] = await sharp(await cut(0, 0.05, 0.05, 0).png().toBuffer())
    .rotate(90)
    .jpeg()
    .toBuffer();
  // a frame on one side: the upload's crops from each side take it off, and a blocked crop from one side meets what is
  // left, turned or not
  const onOneSide = async (left: number, bottom: number): Promise<Buffer> => {
    const [dx, dy] = [Math.round(width * left), Math.round(height * bottom)];
    return sharp(await noise(width + dx, height + dy, 3))
      .composite([{ input: photo, left: dx, top: 0 }])
      .png()
      .toBuffer();
  };
  edits['inside a 6% frame of noise on the left only'] = await sharp(await onOneSide(0.06, 0))
    .jpeg()
    .toBuffer();
  edits['above a 14% frame of noise at the bottom, turned 90°'] = await sharp(await onOneSide(0, 0.14))
    .rotate(90)
    .jpeg()
    .toBuffer();
  return edits;
}

describe('npm run admin: restore', () => {
  it('refuses what it cannot restore, each said clearly: online, being removed, no versions kept, taken down', async () => {
    const service = await createTestService();
    const admin = adminOf(service);
    const image = await upload(service, 11);
    await expect(admin.restore(image.url_viewer)).rejects.toThrow(`${image.url_viewer} is not removed: it is online`);
    expect((await service.send(new Request(image.delete_url, { method: 'POST' }))).statusCode).toBe(200);
    await expect(admin.restore(image.id_encoded)).rejects.toThrow(
      `${image.id_encoded} is being removed: restore it once the sweep has run`,
    );
    const sweep = createSweepHandler({
      BUCKET_NAME: service.bucket,
      TABLE_NAME: service.table,
      PARAMETER_PREFIX: service.parameterPrefix,
      PUBLIC_URL,
    });
    expect(await sweep()).toMatchObject({ removed: 1, failed: 0 });
    // the local stand-in keeps no versions (the stack's bucket does: the IAM twin restores there)
    await expect(admin.restore(image.url)).rejects.toThrow(
      `${image.url} cannot be restored: this object store keeps no earlier versions`,
    );
    expect((await service.items('IMG#')).map((item) => item['status'])).toEqual(['removed']);
    // a takedown keeps nothing, not even the removed record
    await admin.takedown(image.id_encoded, { block: false });
    expect(await service.items('IMG#')).toEqual([]);
    await expect(admin.restore(image.id_encoded)).rejects.toThrow(`no image ${image.id_encoded}`);
  });
});

describe('npm run admin: takedown --block holds for the picture, not only the bytes', () => {
  const BLOCKED_REFUSAL = { status: 403, code: 151 };

  it('refuses every edit an abuser tries of a blocked photo, and takes other photos', async () => {
    const service = await createTestService();
    const photo = await makePhoto(1);
    const first = await sent(service, photo, 'photo.jpg');
    expect(first).toEqual({ status: 200, code: 0 });
    const listed = await adminOf(service).list({ sinceMs: 0, limit: 10 });
    const done = await adminOf(service).takedown(listed[0]?.idEncoded ?? '', { block: true });
    expect(done.blockedPictures).toHaveLength(1);
    const variants: Record<string, Buffer> = {
      'two bytes appended': Buffer.concat([photo, Buffer.from([0, 0])]),
      'another EXIF block': withOtherExif(photo),
      'JPEG quality 55': await sharp(photo).jpeg({ quality: 55 }).toBuffer(),
      'half size': await sharp(photo).resize({ width: 400 }).jpeg().toBuffer(),
      WebP: await sharp(photo).webp().toBuffer(),
      PNG: await sharp(photo).png().toBuffer(),
      '10% brighter': await sharp(photo).modulate({ brightness: 1.1 }).jpeg().toBuffer(),
      mirrored: await sharp(photo).flop().jpeg().toBuffer(),
      'turned 90°': await sharp(photo).rotate(90).jpeg().toBuffer(),
      ...(await cropsAndFrames(photo)),
    };
    // its centred crops' eight forms and more: those of its crops from one side and two
    expect(done.blockedCrops).toBeGreaterThan(7 * 8);
    for (const [edit, bytes] of Object.entries(variants)) {
      expect({ edit, ...(await sent(service, bytes, 'again.jpg')) }).toEqual({ edit, ...BLOCKED_REFUSAL });
    }
    for (const seed of [2, 3, 4, 5])
      expect(await sent(service, await makePhoto(seed), `other${seed}.jpg`)).toEqual({ status: 200, code: 0 });
    // nothing of the refused uploads stays: the four other photos' three files each (beside the block list)
    expect((await service.objectKeys()).filter((key) => key.startsWith('images/'))).toHaveLength(12);
  });

  it("lifts a picture's own hash and says what of its takedown still blocks it; its batch lifts it whole", async () => {
    const service = await createTestService({ MODERATION_CACHE_SECONDS: '0' });
    const photo = await makePhoto(29);
    expect(await sent(service, photo, 'photo.jpg')).toEqual({ status: 200, code: 0 });
    const admin = adminOf(service);
    const [listed] = await admin.list({ sinceMs: 0, limit: 1 });
    const id = listed?.idEncoded ?? '';
    const [own = ''] = (await admin.takedown(id, { block: true })).blockedPictures;
    // a batch a part: its own hash, its crops'
    const batches = (await admin.blocks.list()).pictures;
    expect(batches.map(({ reason }) => reason)).toEqual([`taken down: ${id}`, `taken down: ${id}, its crops`]);
    const batch = batches[1];
    const lifted = await admin.blocks.unblock(own);
    expect(lifted).toBe(
      `the picture of PDQ hash ${own}; the rest of its takedown still blocks that picture, by batch ${batch?.id} (taken down: ${id}, its crops): ${batch?.count} more; unblock ${batch?.id} lifts them`,
    );
    // a copy of other bytes is still refused by the hashes of its crops, until the batch is lifted
    const copy = await sharp(photo).jpeg({ quality: 55 }).toBuffer();
    expect(await sent(service, copy, 'copy.jpg')).toEqual({ status: 403, code: 151 });
    await admin.blocks.unblock(String(batch?.id));
    expect(await sent(service, copy, 'copy.jpg')).toEqual({ status: 200, code: 0 });
  });

  it('lists the stored copies of a picture, nearest first, and takes them down together with --similar', async () => {
    const service = await createTestService();
    const admin = adminOf(service);
    const photo = await makePhoto(31);
    const copies: Array<[string, Buffer, string]> = [
      ['the photo', photo, '203.0.113.1'],
      ['a smaller WebP', await sharp(photo).resize({ width: 500 }).webp().toBuffer(), '203.0.113.2'],
      ['a mirrored copy', await sharp(photo).flop().jpeg().toBuffer(), '203.0.113.3'],
      ['another photo', await makePhoto(32), '203.0.113.4'],
    ];
    const ids: string[] = [];
    for (const [name, bytes, ip] of copies) {
      const response = await service.send(multipartUpload({ key: service.apiKey, source: { bytes, filename: 'p.jpg' } }), ip);
      expect({ name, status: response.statusCode }).toEqual({ name, status: 200 });
      ids.push(String(jsonBody(response).image['id_encoded']));
    }
    const near = await admin.similar(ids[0] ?? '');
    expect(near.map((image) => image.idEncoded).sort()).toEqual([ids[1], ids[2]].sort());
    expect(near.every((image) => image.distance <= 31)).toBe(true);
    expect(await admin.similar(ids[0] ?? '', 128)).toHaveLength(3);
    const done = await admin.takedown(ids[0] ?? '', { block: false, similar: true });
    expect(done.removed.map((image) => image.idEncoded).sort()).toEqual(ids.slice(0, 3).sort());
    expect(done.removed.filter((image) => image.distance !== undefined)).toHaveLength(2);
    // the other photo stays, with its three files
    expect(await service.objectKeys()).toHaveLength(3);
  });

  it('blocks the pictures of an imported hash list, and refuses a list it cannot read, naming the line', async () => {
    const service = await createTestService();
    const admin = adminOf(service);
    const photo = await makePhoto(9);
    const { perceptual } = await (await defaultProcessor()).process(photo, { targetWidth: undefined });
    const hash = perceptual?.hashes[0] ?? '';
    const flat = await (await defaultProcessor()).process(await makePhoto(10), { targetWidth: undefined });
    const list = `# a list\n${hash.toUpperCase()},100\n${flat.perceptual?.hashes[0] ?? ''},49,flat.jpg\n\n`;
    await expect(admin.blocks.importPictureHashes(list, 'list.csv')).resolves.toEqual({ blocked: 1, listed: 1, skipped: 1 });
    expect(await sent(service, await sharp(photo).resize({ width: 500 }).webp().toBuffer(), 'again.webp')).toEqual(
      BLOCKED_REFUSAL,
    );
    expect(await sent(service, await makePhoto(10), 'other.jpg')).toEqual({ status: 200, code: 0 });
    // lifted by its batch's number, as `admin blocks` lists it: the edit is taken again
    expect((await admin.blocks.list()).pictures).toEqual([
      { id: 1, reason: 'imported: list.csv', addedAtMs: expect.any(Number) as unknown, count: 1 },
    ]);
    await expect(admin.blocks.unblock('1')).resolves.toBe('batch 1: 1 picture');
    expect(await sent(service, await sharp(photo).resize({ width: 500 }).webp().toBuffer(), 'again.webp')).toEqual({
      status: 200,
      code: 0,
    });
    await expect(admin.blocks.unblock('1')).rejects.toThrow('no batch 1 of blocked pictures');
    await expect(admin.blocks.importPictureHashes(`${hash}\nnot-a-hash\n`, 'bad.txt')).rejects.toThrow(
      'line 2 holds no PDQ hash (64 hex digits): not-a-hash: nothing was blocked',
    );
  });
});

/** A service with a photo (drawn from `seed`, or these bytes) uploaded, then taken down with `--block`. */
async function blockedPhoto(seed: number | Buffer): Promise<{ service: TestService; photo: Buffer }> {
  const service = await createTestService({ MODERATION_CACHE_SECONDS: '0' });
  const photo = typeof seed === 'number' ? await makePhoto(seed) : seed;
  expect(await sent(service, photo, 'photo.jpg')).toEqual({ status: 200, code: 0 });
  const [listed] = await adminOf(service).list({ sinceMs: 0, limit: 1 });
  await adminOf(service).takedown(listed?.idEncoded ?? '', { block: true });
  return { service, photo };
}

describe('npm run admin: a blocked picture hidden in the alpha channel', () => {
  /** A photo as black pixels whose transparency draws it: on a white page it shows as the photo in grey. */
  async function inAlpha(photo: Buffer): Promise<Buffer> {
    const { data, info } = await sharp(photo).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const rgba = Buffer.alloc(info.width * info.height * 4);
    for (let at = 0; at < info.width * info.height; at += 1) {
      const [r = 0, g = 0, b = 0] = data.subarray(at * 3, at * 3 + 3);
      rgba[at * 4 + 3] = 255 - Math.round(0.299 * r + 0.587 * g + 0.114 * b);
    }
    return sharp(rgba, { raw: { width: info.width, height: info.height, channels: 4 } })
      .png()
      .toBuffer();
  }

  it('is refused as a viewer sees it, and another photo hidden the same way is taken', async () => {
    const { service, photo } = await blockedPhoto(12);
    expect(await sent(service, await inAlpha(photo), 'hidden.png')).toEqual({ status: 403, code: 151 });
    expect(await sent(service, await inAlpha(await makePhoto(13)), 'other.png')).toEqual({ status: 200, code: 0 });
  });

  it('is refused inside an opaque frame of noise: the crops are of what a viewer sees', async () => {
    const { service, photo } = await blockedPhoto(16);
    const hidden = await inAlpha(photo);
    const { width = 0, height = 0 } = await sharp(photo).metadata();
    const [dx, dy] = [Math.round(width * 0.05), Math.round(height * 0.05)];
    const framed = await sharp(await noise(width + 2 * dx, height + 2 * dy, 4))
      .ensureAlpha(1)
      .composite([{ input: hidden, left: dx, top: dy, blend: 'source' }])
      .png()
      .toBuffer();
    expect(await sent(service, framed, 'hidden-framed.png')).toEqual({ status: 403, code: 151 });
  });
});

describe('npm run admin: a blocked picture washed out', () => {
  it('is refused by its copy with the contrast stretched, and keeps no hash of its own', async () => {
    const { service, photo } = await blockedPhoto(19);
    // so washed out that its own hash falls under quality 50 (it would never be compared)
    const washed = await sharp(photo).linear(0.2, 102).jpeg().toBuffer();
    expect(await sent(service, washed, 'washed.jpg')).toEqual({ status: 403, code: 151 });
    // faded to 8 shades either side of grey, and so with a black dot in its middle (whose hash, inside the faded
    // picture taken for a plain border, says enough on its own)
    const faded = sharp(photo).linear(8 / 128, 128 - 8);
    expect(await sent(service, await faded.clone().png().toBuffer(), 'faded.png')).toEqual({ status: 403, code: 151 });
    const { width = 0, height = 0 } = await sharp(photo).metadata();
    const dot = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000000' } })
      .png()
      .toBuffer();
    const dotted = await faded
      .clone()
      .composite([{ input: dot, left: Math.round(width / 2), top: Math.round(height / 2) }])
      .png()
      .toBuffer();
    expect(await sent(service, dotted, 'dotted.png')).toEqual({ status: 403, code: 151 });
    // another photo washed out alike is taken, and its record keeps no hash (none says enough of it)
    const other = await sharp(await makePhoto(20))
      .linear(0.2, 102)
      .jpeg()
      .toBuffer();
    expect(await sent(service, other, 'other.jpg')).toEqual({ status: 200, code: 0 });
    const [taken] = await adminOf(service).list({ sinceMs: 0, limit: 1 });
    const info = await adminOf(service).info(taken?.idEncoded ?? '');
    expect(info.pdq.hashes).toEqual([]);
  });
});

describe('npm run admin: a blocked picture in a frame inside a plain border', () => {
  it('is refused: the crops are of the picture inside its plain border', async () => {
    const { service, photo } = await blockedPhoto(17);
    const framed = (await cropsAndFrames(photo))['inside a 4% frame of noise'] ?? Buffer.alloc(0);
    const { width = 0 } = await sharp(framed).metadata();
    const side = Math.round(width * 0.08);
    const bordered = await sharp(framed)
      .extend({ top: side, bottom: side, left: side, right: side, background: '#ffffff' })
      .jpeg()
      .toBuffer();
    expect(await sent(service, bordered, 'bordered.jpg')).toEqual({ status: 403, code: 151 });
  });
});

describe('npm run admin: a blocked photo cut by different shares on two sides', () => {
  /** One of the natural photos the tests keep (320 px wide: finer than the drawn ones, as a camera's are). */
  const fixture = (name: string): Buffer => readFileSync(join(__dirname, '../fixtures/photos', name));
  /** The photo with these shares of its width and height cut off its sides. */
  async function cut(photo: Buffer, margins: { left?: number; top?: number; right?: number; bottom?: number }): Promise<Buffer> {
    const { width = 0, height = 0 } = await sharp(photo).metadata();
    const [left, top] = [Math.round(width * (margins.left ?? 0)), Math.round(height * (margins.top ?? 0))];
    const right = Math.round(width * (margins.right ?? 0));
    const bottom = Math.round(height * (margins.bottom ?? 0));
    return sharp(photo)
      .extract({ left, top, width: width - left - right, height: height - top - bottom })
      .jpeg()
      .toBuffer();
  }

  // each of these was taken before the upload's crops of 4.5% from each side (34 to 36 bits from every blocked hash)
  it.each([
    ['astronaut.jpg', { left: 0.03, top: 0.08 }, 'camera.jpg'],
    ['astronaut.jpg', { left: 0.08, right: 0.03 }, 'camera.jpg'],
    ['coffee.jpg', { top: 0.03, bottom: 0.06 }, 'chelsea.jpg'],
  ])(
    '%s cut by %j is refused: its crop from the lesser side evens the shares; %s cut so is taken',
    async (name, margins, other) => {
      const { service, photo } = await blockedPhoto(fixture(name));
      expect(await sent(service, await cut(photo, margins), 'cut.jpg')).toEqual({ status: 403, code: 151 });
      expect(await sent(service, await cut(fixture(other), margins), 'other.jpg')).toEqual({ status: 200, code: 0 });
    },
  );
});

describe('npm run admin: a blocked picture laid inside another', () => {
  /** Pictures laid on a page of `width` x `height` (a colour, or a picture of that size), as a JPEG. */
  const laid = (...args: Parameters<typeof laidOn>): Promise<Buffer> =>
    laidOn(...args)
      .jpeg()
      .toBuffer();

  /** A screenshot of a picture in a browser's dark viewer, as a JPEG. */
  const screenshot = async (picture: Buffer): Promise<Buffer> => (await inAViewer(picture)).jpeg().toBuffer();

  it('is refused laid off centre on noise, in a frame of different widths, in a screenshot, in a tile', async () => {
    const { service, photo } = await blockedPhoto(21);
    const small = await sharp(photo).resize({ width: 480 }).toBuffer();
    const others = await Promise.all([22, 23, 24].map((seed) => makePhoto(seed, 400, 300)));
    const edits: Record<string, Buffer> = {
      'at 60% of its size on noise, off centre': await laid(await noise(800, 600, 3), 800, 600, [
        { input: small, left: 80, top: 150 },
      ]),
      'in a frame of noise of 3% left, 12% right, 7% top, none at the bottom': await laid(await noise(920, 642, 3), 920, 642, [
        { input: photo, left: 24, top: 42 },
      ]),
      'in a screenshot of a browser': await screenshot(photo),
      'in a 2x2 tile with three other photos': await laid('#000000', 800, 600, [
        { input: await sharp(photo).resize(400, 300).toBuffer(), left: 0, top: 0 },
        ...others.map((input, k) => ({ input, left: ((k + 1) % 2) * 400, top: Math.floor((k + 1) / 2) * 300 })),
      ]),
    };
    for (const [edit, bytes] of Object.entries(edits))
      expect({ edit, ...(await sent(service, bytes, 'again.jpg')) }).toEqual({ edit, status: 403, code: 151 });
    // other photos laid out alike are taken
    for (const seed of [25, 26])
      expect(await sent(service, await screenshot(await makePhoto(seed)), `other${seed}.jpg`)).toEqual({ status: 200, code: 0 });
  });

  it('blocks the picture inside a blocked screenshot when asked (--inside): alone, or mirrored inside another, it is refused', async () => {
    const service = await createTestService({ MODERATION_CACHE_SECONDS: '0' });
    const photo = await makePhoto(27);
    expect(await sent(service, await screenshot(photo), 'screenshot.jpg')).toEqual({ status: 200, code: 0 });
    const [listed] = await adminOf(service).list({ sinceMs: 0, limit: 1 });
    const done = await adminOf(service).takedown(listed?.idEncoded ?? '', { block: true, inside: true });
    expect(done.blockedInside).toBeGreaterThan(0);
    // the pictures inside it in a batch of their own, which `blocks` names and `unblock` lifts alone
    const inside = (await adminOf(service).blocks.list()).pictures.find(
      ({ reason }) => reason === `taken down: ${done.idEncoded}, pictures inside it`,
    );
    expect(inside?.count).toBeGreaterThan(0);
    expect(await sent(service, photo, 'alone.jpg')).toEqual({ status: 403, code: 151 });
    // the blocked side keeps the pictures inside it turned and mirrored; an upload's are compared as they are
    const mirrored = await sharp(photo).flop().toBuffer();
    const onNoise = await laid(await noise(1100, 800, 3), 1100, 800, [{ input: mirrored, left: 240, top: 120 }]);
    expect(await sent(service, onNoise, 'mirrored.jpg')).toEqual({ status: 403, code: 151 });
    expect(await sent(service, await makePhoto(28), 'other.jpg')).toEqual({ status: 200, code: 0 });
  });
  it('blocks a collage, not its parts: its harmless panel is taken after it, and a copy of the collage refused', async () => {
    const service = await createTestService({ MODERATION_CACHE_SECONDS: '0' });
    const [abusive, harmless] = await Promise.all([makePhoto(31, 600, 600), makePhoto(32, 600, 600)]);
    const collage = await laid('#ffffff', 1240, 640, [
      { input: abusive, left: 20, top: 20 },
      { input: harmless, left: 620, top: 20 },
    ]);
    expect(await sent(service, collage, 'collage.jpg')).toEqual({ status: 200, code: 0 });
    const [listed] = await adminOf(service).list({ sinceMs: 0, limit: 1 });
    const done = await adminOf(service).takedown(listed?.idEncoded ?? '', { block: true });
    expect(done.blockedInside).toBe(0);
    expect(await sent(service, await sharp(collage).jpeg({ quality: 60 }).toBuffer(), 'again.jpg')).toEqual({
      status: 403,
      code: 151,
    });
    expect(await sent(service, harmless, 'harmless.jpg')).toEqual({ status: 200, code: 0 });
  });
});

describe('npm run admin: a blocked picture sent as an animation', () => {
  it('is refused by its frames, as a GIF of two frames, framed or not, and another photo as an animation is taken', async () => {
    const { service, photo } = await blockedPhoto(14);
    /** Two frames: the photo, and the photo a little brighter (no encoder merges them), as an animated GIF. */
    const animated = async (source: Buffer): Promise<Buffer> => {
      const frames = await Promise.all(
        [1, 1.1].map((brightness) =>
          sharp(source).resize({ width: 400 }).modulate({ brightness }).ensureAlpha().raw().toBuffer({ resolveWithObject: true }),
        ),
      );
      const { width, height } = frames[0]?.info ?? { width: 0, height: 0 };
      return sharp(Buffer.concat(frames.map(({ data }) => data)), {
        raw: { width, height: height * 2, channels: 4, pageHeight: height },
      })
        .gif({ loop: 0, delay: [500, 500] })
        .toBuffer();
    };
    expect(await sent(service, await animated(photo), 'again.gif')).toEqual({ status: 403, code: 151 });
    // and framed: each frame's crops are compared, as a still picture's
    const framed = (await cropsAndFrames(photo))['inside a 7% frame of noise'] ?? Buffer.alloc(0);
    expect(await sent(service, await animated(framed), 'framed.gif')).toEqual({ status: 403, code: 151 });
    expect(await sent(service, await animated(await makePhoto(15)), 'other.gif')).toEqual({ status: 200, code: 0 });
  });

  it('is refused when spread over many short frames between frames of other pictures', async () => {
    const { service, photo } = await blockedPhoto(18);
    // 12 frames of 100 ms: the photo in 7 of them (each a little brighter than the last, so no two are alike), and
    // five other photos at the moments a viewer's time would pick (frames 0, 1, 4, 7 and 10)
    const others = [0, 1, 4, 7, 10];
    const frames = await Promise.all(
      Array.from({ length: 12 }, async (_, page) => {
        const source = others.includes(page) ? await makePhoto(40 + page) : photo;
        return sharp(source).resize(400, 300, { fit: 'fill' }).linear(1, page).ensureAlpha().raw().toBuffer();
      }),
    );
    const gif = await sharp(Buffer.concat(frames), { raw: { width: 400, height: 300 * 12, channels: 4, pageHeight: 300 } })
      .gif({ loop: 0, delay: Array<number>(12).fill(100) })
      .toBuffer();
    expect((await sharp(gif).metadata()).pages).toBe(12);
    expect(await sent(service, gif, 'spread.gif')).toEqual({ status: 403, code: 151 });
  });
});

describe('npm run admin: pictures that hash poorly', () => {
  /** RGBA pixels: a black shape on a transparent ground (logos, stickers, signatures). */
  const blackOnTransparent = (inside: (x: number, y: number) => boolean): Promise<Buffer> => {
    const side = 200;
    const data = Buffer.alloc(side * side * 4);
    for (let y = 0; y < side; y += 1) for (let x = 0; x < side; x += 1) if (inside(x, y)) data[(y * side + x) * 4 + 3] = 255;
    return sharp(data, { raw: { width: side, height: side, channels: 4 } })
      .png()
      .toBuffer();
  };

  it('blocks a sticker as seen on a page, and takes unrelated logos, black and transparent pictures after it', async () => {
    const service = await createTestService({ MODERATION_CACHE_SECONDS: '0' });
    const sticker = await blackOnTransparent((x, y) => (x - 100) ** 2 + (y - 100) ** 2 < 60 ** 2);
    expect(await sent(service, sticker, 'sticker.png')).toEqual({ status: 200, code: 0 });
    const [listed] = await adminOf(service).list({ sinceMs: 0, limit: 1 });
    const done = await adminOf(service).takedown(listed?.idEncoded ?? '', { block: true });
    // its colours are all black, which hashes to nothing worth blocking; what a viewer sees, the black disc on a white
    // page, is blocked (on a black page it is flat again)
    expect(done.blockedPictures).toHaveLength(1);
    expect(done.blocked.length).toBeGreaterThan(0);
    expect(await sent(service, sticker, 'again.png')).toEqual({ status: 403, code: 151 });
    const others: Record<string, Buffer> = {
      'another logo': await blackOnTransparent((x, y) => Math.abs(x - 100) < 40 && Math.abs(y - 60) < 20),
      'a signature': await blackOnTransparent((x, y) => Math.abs(y - 100 - 30 * Math.sin(x / 15)) < 3),
      'a black JPEG': await sharp({ create: { width: 300, height: 200, channels: 3, background: '#000000' } })
        .jpeg()
        .toBuffer(),
      'a transparent PNG': await blackOnTransparent(() => false),
      'a white PNG': await sharp({ create: { width: 64, height: 64, channels: 3, background: '#ffffff' } })
        .png()
        .toBuffer(),
      // other plain shapes, whose lines once made pictures inside the blocked one that met them
      'a square': await blackOnTransparent((x, y) => Math.abs(x - 100) < 60 && Math.abs(y - 100) < 60),
      'a triangle': await blackOnTransparent((x, y) => y > 30 && y < 170 && Math.abs(x - 100) < (y - 30) / 2),
      'a diamond': await blackOnTransparent((x, y) => Math.abs(x - 100) + Math.abs(y - 100) < 80),
      'a ring': await blackOnTransparent((x, y) => Math.abs(Math.hypot(x - 100, y - 100) - 60) < 15),
    };
    for (const [name, bytes] of Object.entries(others)) {
      expect({ name, ...(await sent(service, bytes, 'other.png')) }).toEqual({ name, status: 200, code: 0 });
    }
  });
});

describe('npm run admin: a blocked sticker of a plain shape', () => {
  /** A black shape on transparency, drawn 512 px wide from an SVG of it (a sticker, as an emoji set draws them). */
  const shape = (body: string): Promise<Buffer> =>
    sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" fill="black">${body}</svg>`))
      .png()
      .toBuffer();

  it('refuses copies of it, and takes other plain shapes, whose own lines once met the lines found inside it', async () => {
    const service = await createTestService({ MODERATION_CACHE_SECONDS: '0' });
    const arrow = await shape('<polygon points="40,200 300,200 300,100 472,256 300,412 300,312 40,312"/>');
    expect(await sent(service, arrow, 'arrow.png')).toEqual({ status: 200, code: 0 });
    const [listed] = await adminOf(service).list({ sinceMs: 0, limit: 1 });
    await adminOf(service).takedown(listed?.idEncoded ?? '', { block: true });
    const onWhite = await sharp(arrow).flatten({ background: '#ffffff' }).jpeg().toBuffer();
    expect(await sent(service, onWhite, 'again.jpg')).toEqual({ status: 403, code: 151 });
    const others = {
      diamond: '<polygon points="256,30 482,256 256,482 30,256"/>',
      hexagon: '<polygon points="456,256 356,429 156,429 56,256 156,83 356,83"/>',
      triangle: '<polygon points="256,40 472,440 40,440"/>',
    };
    for (const [name, body] of Object.entries(others))
      expect({ name, ...(await sent(service, await shape(body), `${name}.png`)) }).toEqual({ name, status: 200, code: 0 });
  });
});

describe('npm run admin: ban and unban', () => {
  it('refuses uploads from a banned address or range (IPv4 and IPv6) with 403, code 150, until unbanned', async () => {
    const service = await createTestService({ MODERATION_CACHE_SECONDS: '0' });
    const admin = adminOf(service);
    expect(await admin.bans.add('203.0.113.0/24', undefined)).toEqual({ range: '203.0.113.0/24', untilMs: null });
    expect(await admin.bans.add('2001:db8:0:0::1/48', 3_600_000)).toMatchObject({ range: '2001:db8::/48' });
    const banned = { status: 403, code: 150, message: 'Uploads from your address are not allowed' };
    expect(await refusal(service, 4, '203.0.113.77')).toEqual(banned);
    expect(await refusal(service, 4, '2001:db8:0:5::9')).toEqual(banned);
    expect(await refusal(service, 4, '::ffff:203.0.113.1')).toEqual(banned);
    await upload(service, 4, '198.51.100.7');
    expect((await admin.bans.inForce()).map((ban) => ban.range).sort()).toEqual(['2001:db8::/48', '203.0.113.0/24']);
    expect(await admin.bans.lift('203.0.113.0/24')).toEqual({ range: '203.0.113.0/24', stillBannedBy: [] });
    await upload(service, 5, '203.0.113.77');
    await expect(admin.bans.lift('203.0.113.0/24')).rejects.toThrow('no ban of 203.0.113.0/24');
    await expect(admin.bans.add('300.1.1.1', undefined)).rejects.toThrow('not an address or CIDR range');
  });

  it('lets a ban with an end lapse', async () => {
    const service = await createTestService({ MODERATION_CACHE_SECONDS: '0' });
    const admin = adminOf(service);
    await admin.bans.add('198.51.100.9', 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await upload(service, 6, '198.51.100.9');
    expect(await admin.bans.inForce()).toEqual([]);
    // the next ban drops the ones that are over from the one item that holds them all
    await admin.bans.add('198.51.100.10', undefined);
    const [item] = await service.items('BANS');
    expect(Object.keys(item?.['ranges'] ?? {})).toEqual(['198.51.100.10/32']);
  });
});

describe('npm run admin: list and stats', () => {
  it('lists recent uploads, newest first, by address or range too', async () => {
    const service = await createTestService();
    const admin = adminOf(service);
    const first = await upload(service, 7, '203.0.113.5');
    const second = await upload(service, 8, '198.51.100.2');
    const third = await upload(service, 9, '203.0.113.5');
    const listed = await admin.list({ sinceMs: Date.now() - 60_000, limit: 10 });
    expect(listed.map((entry) => entry.idEncoded)).toEqual([third.id_encoded, second.id_encoded, first.id_encoded]);
    expect(listed[0]).toMatchObject({
      viewerUrl: third.url_viewer,
      size: third.size,
      clientIp: '203.0.113.5',
      expiresAtMs: null,
    });
    expect((await admin.list({ sinceMs: 0, ip: '198.51.100.2', limit: 10 })).map((entry) => entry.idEncoded)).toEqual([
      second.id_encoded,
    ]);
    expect((await admin.list({ sinceMs: 0, ip: '203.0.113.0/24', limit: 10 })).map((entry) => entry.idEncoded)).toEqual([
      third.id_encoded,
      first.id_encoded,
    ]);
    await expect(admin.list({ sinceMs: 0, ip: 'nobody', limit: 10 })).rejects.toThrow('not an address or CIDR range: nobody');
    expect(await admin.list({ sinceMs: 0, limit: 1 })).toHaveLength(1);
    expect(await admin.list({ sinceMs: Date.now() + 60_000, limit: 10 })).toEqual([]);
  });

  it('counts uploads and bytes per day once the sweep settles them, and refusals as they happen, without a key apart', async () => {
    const service = await createTestService({ STATS_FLUSH_SECONDS: '0' });
    const admin = adminOf(service);
    const images = [await upload(service, 10), await upload(service, 11)];
    // 30 junk requests from anyone: no key, a wrong key; and one refusal of a request with the key
    for (let junk = 0; junk < 15; junk += 1) {
      expect((await service.send(new Request(`${PUBLIC_URL}/api/1/upload?source=x`))).statusCode).toBe(401);
      const wrong = multipartUpload({ key: 'wrong', source: { bytes: await makePng(5, 5), filename: 'x.png' } });
      expect((await service.send(wrong)).statusCode).toBe(401);
    }
    const refused = await service.send(
      multipartUpload({ key: service.apiKey, source: { bytes: Buffer.from('no image'), filename: 'x.png' } }),
    );
    expect(refused.statusCode).toBe(415);
    const env = { BUCKET_NAME: service.bucket, TABLE_NAME: service.table, PARAMETER_PREFIX: service.parameterPrefix, PUBLIC_URL };
    await createSweepHandler(env, NO_METRICS, clockAheadBy(16 * 60_000))();
    const [today] = (await admin.stats(1)).slice(-1);
    const bytes = images.reduce((sum, image) => sum + image.size + image.thumb.size + image.medium.size, 0);
    expect(today).toEqual({
      day: new Date().toISOString().slice(0, 10),
      uploads: 2,
      bytes,
      refusals: 1,
      unauthenticated: 30,
      reports: 0,
    });
    // a second sweep counts nothing twice
    await createSweepHandler(env, NO_METRICS, clockAheadBy(17 * 60_000))();
    expect((await admin.stats(1))[0]).toMatchObject({ uploads: 2, bytes });
    expect(await admin.stats(3)).toHaveLength(3);
  });
});
