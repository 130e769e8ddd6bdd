import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import sharp from 'sharp';
import { loadNsfwClassifier } from '../functions/imaging/nsfw-classifier';
import { SharpImageProcessor } from '../functions/imaging/sharp-image-processor';
import { makePhoto } from '../test/support/images';
import { imagingSettings } from '../functions/roots/build';
import { loadConfig } from '../functions/config';
import { EDITS } from './pdq-measure';

/**
 * `npx tsx scripts/nsfw-measure.ts FOLDER`: the embedded classifier's score (Porn + Hentai) of each photo of FOLDER
 * through the service's own imaging, of each edit `scripts/pdq-measure.ts` makes of it, and of the synthetic pictures
 * the tests draw (`makePhoto`), against `NSFW_THRESHOLD_PERCENT`. `docs/moderation.md` holds a run.
 */
async function main(): Promise<void> {
  const folder = process.argv[2];
  if (!folder) throw new Error('usage: tsx scripts/nsfw-measure.ts FOLDER');
  const config = loadConfig({ BUCKET_NAME: 'b', TABLE_NAME: 't', ...process.env });
  const processor = new SharpImageProcessor(imagingSettings(config), await loadNsfwClassifier());
  const score = async (bytes: Buffer): Promise<number> =>
    (await (await processor.process(bytes, { targetWidth: undefined })).nsfwScoring)?.score ?? NaN;
  const files = readdirSync(folder).filter((name) => ['.jpg', '.jpeg', '.png', '.webp'].includes(extname(name).toLowerCase()));
  const rows: Array<{ name: string; photo: number; edits: number[] }> = [];
  for (const name of files) {
    const jpeg = await sharp(readFileSync(join(folder, name)))
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 90 })
      .toBuffer();
    const { width = 0, height = 0 } = await sharp(jpeg).metadata();
    const edits: number[] = [];
    for (const make of Object.values(EDITS)) edits.push(await score(await make(jpeg, width, height)));
    rows.push({ name, photo: await score(jpeg), edits });
  }
  const synthetic: number[] = [];
  for (let seed = 1; seed <= 20; seed += 1) synthetic.push(await score(await makePhoto(seed)));
  const all = rows.flatMap((row) => [row.photo, ...row.edits]);
  const percent = (value: number): string => `${(value * 100).toFixed(1)}%`;
  process.stdout.write(`| photo | its score | highest of its ${Object.keys(EDITS).length} edits |\n|---|---|---|\n`);
  for (const row of rows) process.stdout.write(`| ${row.name} | ${percent(row.photo)} | ${percent(Math.max(...row.edits))} |\n`);
  process.stdout.write(
    `\n${all.length} photos and edits: highest ${percent(Math.max(...all))}; ` +
      `at or over the threshold (${config.nsfw.threshold * 100}%): ${all.filter((value) => value >= config.nsfw.threshold).length}\n`,
  );
  process.stdout.write(
    `20 synthetic pictures (test/support/images.ts makePhoto): highest ${percent(Math.max(...synthetic))}, ` +
      `median ${percent([...synthetic].sort((a, b) => a - b)[10] ?? NaN)}, ` +
      `at or over the threshold: ${synthetic.filter((value) => value >= config.nsfw.threshold).length}\n`,
  );
}

void main();
