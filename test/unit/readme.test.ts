import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SETTINGS } from '../../functions/config';

describe('README', () => {
  const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');

  it.each(Object.keys(SETTINGS))('documents the setting %s', (name) => {
    expect(readme).toMatch(new RegExp(`\\|\\s*\`${name}\`\\s*\\|`));
  });

  it('shows the two commands of a fresh machine', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });
});
