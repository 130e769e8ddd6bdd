import { readFileSync } from 'node:fs';
import { browserAssets, GENERATED } from '../../../scripts/build-browser';

/**
 * The upload page's script and worker are TypeScript under functions/browser/, bundled into a committed module (the
 * functions have no bundler at run time): that module must be what `npm run build:browser` makes of them now.
 */
describe('the browser assets', () => {
  it('are what npm run build:browser makes of functions/browser/ (run it after changing them)', async () => {
    expect(readFileSync(GENERATED, 'utf8')).toBe(await browserAssets());
  });
});
