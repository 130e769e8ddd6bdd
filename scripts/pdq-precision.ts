import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import sharp from 'sharp';
import { pdqDistance } from '../functions/core/moderation/pdq-hash';
import { PICTURE_MATCH_DISTANCE } from '../functions/core/moderation/moderation';
import { blockedHashesOf } from '../functions/fingerprint/fingerprint';
import { blockedPictureCopy } from '../functions/imaging/fingerprint-copies';
import { SharpImageProcessor } from '../functions/imaging/sharp-image-processor';
import { imagingSettings } from '../functions/roots/build';
import { commandLine } from './command-line';
import { defaultConfig } from './bench/processor';

/**
 * `npx tsx scripts/pdq-precision.ts FOLDER|shapes [BLOCKED]`: whether blocking a picture refuses only copies of it. BLOCKED
 * pictures of FOLDER (10 by default, spread over it in name order) are blocked as `takedown --block` blocks them (their
 * record's hashes and the views `blockedHashesOf` adds, each kept with the view it came from), then every picture of
 * the folder is uploaded as it is, and so are a few copies of each blocked one (a JPEG on white, half size, mirrored,
 * cut 5% a side). A refused upload of another picture is a false refusal; the views that matched it are counted.
 * SVGs are drawn 512 px wide, with their transparency (an emoji set is stickers). `docs/moderation.md` holds a run.
 */

const imaging = new SharpImageProcessor(imagingSettings(defaultConfig()));

/**
 * The set `shapes` (FOLDER given as that word): black shapes on transparency, 512 px, one SVG element each: the
 * stickers a block of one must not refuse the others of.
 */
const SHAPES: Record<string, string> = {
  arrow: '<polygon points="40,200 300,200 300,100 472,256 300,412 300,312 40,312"/>',
  bolt: '<polygon points="290,30 120,290 240,290 200,482 390,200 270,200"/>',
  circle: '<circle cx="256" cy="256" r="200"/>',
  cloud: '<path d="M140 380 A 90 90 0 0 1 150 200 A 120 120 0 0 1 370 180 A 100 100 0 0 1 380 380 Z"/>',
  crescent: '<path d="M300 60 A 200 200 0 1 0 300 452 A 160 160 0 1 1 300 60 Z"/>',
  cross: '<path d="M196 56 h120 v140 h140 v120 h-140 v140 h-120 v-140 h-140 v-120 h140 z"/>',
  diamond: '<polygon points="256,30 482,256 256,482 30,256"/>',
  drop: '<path d="M256 40 C 256 40 100 260 100 340 A 156 156 0 0 0 412 340 C 412 260 256 40 256 40 Z"/>',
  heart:
    '<path d="M256 448 C 80 320 40 200 120 120 C 190 60 256 120 256 160 C 256 120 322 60 392 120 C 472 200 432 320 256 448 Z"/>',
  hexagon: '<polygon points="456,256 356,429 156,429 56,256 156,83 356,83"/>',
  key: '<path d="M120 200 a 80 80 0 1 0 1 0 z M190 240 h260 v40 h-40 v60 h-40 v-60 h-40 v40 h-40 v-40 h-100 z"/>',
  pacman: '<path d="M256 256 L 456 156 A 220 220 0 1 0 456 356 Z"/>',
  ring: '<circle cx="256" cy="256" r="200" fill="none" stroke="black" stroke-width="60"/>',
  square: '<rect x="76" y="76" width="360" height="360"/>',
  star: '<polygon points="256,56 303,191 446,194 332,281 374,418 256,336 138,418 180,281 66,194 209,191"/>',
  triangle: '<polygon points="256,40 472,440 40,440"/>',
};

/** The pictures of a set: the files of a folder, or the shapes. */
function setOf(folder: string): Map<string, () => Promise<Buffer>> {
  if (folder === 'shapes')
    return new Map(
      Object.entries(SHAPES).map(([name, body]) => [
        `${name}.svg`,
        () =>
          sharp(
            Buffer.from(
              `<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="0 0 512 512" fill="black">${body}</svg>`,
            ),
          )
            .png()
            .toBuffer(),
      ]),
    );
  const files = readdirSync(folder)
    .filter((name) => ['.png', '.jpg', '.jpeg', '.webp', '.svg'].includes(extname(name).toLowerCase()))
    .sort();
  return new Map(files.map((name) => [name, () => pictureOf(join(folder, name))]));
}

interface Blocked {
  name: string;
  /** Each hash the block adds, with the view it came from. */
  hashes: Array<{ hash: string; view: string }>;
}

async function pictureOf(file: string): Promise<Buffer> {
  const bytes = readFileSync(file);
  return extname(file).toLowerCase() === '.svg' ? sharp(bytes, { density: 300 }).resize({ width: 512 }).png().toBuffer() : bytes;
}

async function queriesOf(bytes: Buffer): Promise<string[]> {
  return (await imaging.process(bytes, { targetWidth: undefined })).perceptual?.queries.flat() ?? [];
}

async function blockedOf(name: string, bytes: Buffer): Promise<Blocked> {
  const record = (await imaging.process(bytes, { targetWidth: undefined })).perceptual?.hashes ?? [];
  const added = blockedHashesOf(await blockedPictureCopy(bytes));
  return {
    name,
    hashes: [
      ...record.map((hash) => ({ hash, view: 'record' })),
      ...Object.entries(added).flatMap(([view, hashes]) => hashes.map((hash) => ({ hash, view }))),
    ],
  };
}

/** The blocked pictures an upload meets, with the views of theirs that it met. */
function matches(blocked: readonly Blocked[], queries: readonly string[]): Array<{ name: string; views: string[] }> {
  return blocked.flatMap(({ name, hashes }) => {
    const views = [
      ...new Set(
        hashes
          .filter(({ hash }) => queries.some((query) => pdqDistance(hash, query) <= PICTURE_MATCH_DISTANCE))
          .map(({ view }) => view),
      ),
    ];
    return views.length > 0 ? [{ name, views }] : [];
  });
}

const COPIES: Record<string, (picture: Buffer) => Promise<Buffer>> = {
  'a JPEG on white': (picture) => sharp(picture).flatten({ background: '#ffffff' }).jpeg({ quality: 80 }).toBuffer(),
  'half size': (picture) => sharp(picture).resize({ width: 256 }).png().toBuffer(),
  mirrored: (picture) => sharp(picture).flop().png().toBuffer(),
  'cut 5% a side': async (picture) => {
    const { width = 0, height = 0 } = await sharp(picture).metadata();
    const [dx, dy] = [Math.round(width * 0.05), Math.round(height * 0.05)];
    return sharp(picture)
      .extract({ left: dx, top: dy, width: width - 2 * dx, height: height - 2 * dy })
      .png()
      .toBuffer();
  },
};

const USAGE = 'usage: npx tsx scripts/pdq-precision.ts FOLDER|shapes [BLOCKED]   (docs/moderation.md, "Precision")';

async function main(folder: string | undefined, count = '10'): Promise<void> {
  if (!folder) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const set = setOf(folder);
  const files = [...set.keys()];
  const load = (name: string): Promise<Buffer> => set.get(name)?.() ?? Promise.resolve(Buffer.alloc(0));
  // spread over the folder (in name order), so that one family of look-alikes (an emoji set's flags) is not all of them
  const step = Math.max(1, Math.floor(files.length / Number(count)));
  const blockedFiles = files.filter((_, index) => index % step === 0).slice(0, Number(count));
  const blocked: Blocked[] = [];
  const pictures = new Map<string, Buffer>();
  for (const name of blockedFiles) {
    const picture = await load(name);
    pictures.set(name, picture);
    blocked.push(await blockedOf(name, picture));
  }
  let copies = 0;
  let copiesRefused = 0;
  for (const name of blockedFiles) {
    for (const make of Object.values(COPIES)) {
      copies += 1;
      const met = matches(blocked, await queriesOf(await make(pictures.get(name) ?? Buffer.alloc(0))));
      if (met.some((one) => one.name === name)) copiesRefused += 1;
    }
  }
  let others = 0;
  const falseRefusals: Array<{ name: string; met: Array<{ name: string; views: string[] }> }> = [];
  for (const name of files.filter((one) => !blockedFiles.includes(one))) {
    others += 1;
    const met = matches(blocked, await queriesOf(await load(name)));
    if (met.length > 0) falseRefusals.push({ name, met });
  }
  const byView = new Map<string, number>();
  for (const { met } of falseRefusals)
    for (const view of new Set(met.flatMap((one) => one.views))) byView.set(view, (byView.get(view) ?? 0) + 1);
  const refused = copiesRefused + falseRefusals.length;
  process.stdout.write(
    [
      `blocked: ${blocked.length} pictures (${blocked.reduce((sum, one) => sum + one.hashes.length, 0)} hashes)`,
      `copies of them refused: ${copiesRefused} of ${copies} (recall ${(copiesRefused / copies).toFixed(3)})`,
      `other pictures refused: ${falseRefusals.length} of ${others} (false refusals ${(falseRefusals.length / others).toFixed(4)})`,
      `precision (copies refused, of all refused): ${refused === 0 ? '-' : (copiesRefused / refused).toFixed(3)}`,
      `views of the blocked pictures that refused others: ${[...byView].map(([view, n]) => `${view} ${n}`).join(', ') || 'none'}`,
      ...falseRefusals.map(
        ({ name, met }) => `  ${name}: ${met.map((one) => `${one.name} (${one.views.join(', ')})`).join('; ')}`,
      ),
      '',
    ].join('\n'),
  );
}

if (require.main === module) {
  const [folder, count] = commandLine(USAGE, 2);
  void main(folder, count);
}
