import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SETTINGS } from '../../functions/settings-table';
import { settingsDoc } from '../../scripts/settings-doc';

describe('README and docs/settings.md', () => {
  const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
  const settings = readFileSync(join(__dirname, '..', '..', 'docs', 'settings.md'), 'utf8');

  it.each(Object.keys(SETTINGS))('docs/settings.md documents the setting %s', (name) => {
    expect(settings).toMatch(new RegExp(`\\|\\s*\`${name}\`\\s*\\|`));
  });

  it('docs/settings.md holds the tables npm run docs:settings writes from the settings themselves', () => {
    expect(settings).toBe(settingsDoc(settings));
  });

  it('shows the two commands of a fresh machine', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });

  it('links only to docs that exist', () => {
    for (const [, path] of readme.matchAll(/\]\(((?:docs\/)[^)#]+)\)/g)) {
      expect(() => readFileSync(join(__dirname, '..', '..', path ?? ''))).not.toThrow();
    }
  });
});
