/**
 * `npm run build:browser`: bundles the upload page's script and its service worker (`functions/browser/`, TypeScript
 * checked against the DOM's types) and draws the web app's icons, into `functions/http/generated/browser-assets.ts`,
 * which the functions serve. The file is committed (Lambda has no bundler); `test/unit/http/browser-assets.test.ts`
 * fails when it is not what this script makes of the sources.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandLine } from './command-line';

const ROOT = join(__dirname, '..');
export const GENERATED = join(ROOT, 'functions', 'http', 'generated', 'browser-assets.ts');

/** The icon: an arrow up out of a tray, white on the pages' link blue, inside the safe zone of a maskable icon. */
const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512"><rect width="512" height="512" fill="#0a58ca"/><path d="M256 120 140 244h76v100h80V244h76z" fill="#fff"/><rect x="136" y="370" width="240" height="36" rx="18" fill="#fff"/></svg>`;
export const ICON_SIZES = [192, 512] as const;

async function bundle(entry: string): Promise<string> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [join(ROOT, 'functions', 'browser', entry)],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error(`esbuild made nothing of ${entry}`);
  return output.text;
}

async function icon(size: number): Promise<string> {
  const { default: sharp } = await import('sharp');
  const png = await sharp(Buffer.from(ICON_SVG), { density: (72 * size) / 512 })
    .resize(size, size)
    .png({ compressionLevel: 9, palette: true })
    .toBuffer();
  return png.toString('base64');
}

/** The generated module's text. */
export async function browserAssets(): Promise<string> {
  const [page, worker] = await Promise.all([bundle('upload-page.ts'), bundle('upload-worker.ts')]);
  const icons = await Promise.all(ICON_SIZES.map(async (size) => `  ${size}: ${JSON.stringify(await icon(size))},`));
  return `// Made by \`npm run build:browser\` from functions/browser/ (scripts/build-browser.ts): do not edit.

/** The upload page's script, embedded in the page under its CSP hash. */
export const UPLOAD_PAGE_SCRIPT = ${JSON.stringify(page)};

/** The upload page's service worker, served at its own path. */
export const UPLOAD_WORKER_SCRIPT = ${JSON.stringify(worker)};

/** The web app's icons, PNG in base64, by size. */
export const UPLOAD_ICONS: Record<number, string> = {
${icons.join('\n')}
};
`;
}

if (require.main === module) {
  commandLine(
    'usage: npm run build:browser   (writes functions/http/generated/browser-assets.ts) (exit codes: 0 done, 1 failed, 2 usage)',
  );
  browserAssets()
    .then((text) => {
      writeFileSync(GENERATED, text);
      console.log(`wrote ${GENERATED.slice(ROOT.length + 1)}`);
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
