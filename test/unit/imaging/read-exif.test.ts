import { spawnSync } from 'node:child_process';
import { readExif } from '../../../functions/imaging/read-exif';
import { exifWithMake } from '../../support/exif-blob';

describe('EXIF strings', () => {
  it('drops the NULs that end a string and keeps the text', () => {
    expect(readExif(exifWithMake(Buffer.from('TestCam\0\0\0', 'latin1')))).toEqual({ Make: 'TestCam' });
  });

  it('leaves out a string with NULs inside it', () => {
    expect(readExif(exifWithMake(Buffer.from('Test\0\0Cam', 'latin1')))).toBeNull();
  });

  it('reads a string of 2 million NULs and one letter in linear time (a child with a deadline runs it)', () => {
    // A `/\0+$/` trim is quadratic on this string: about half an hour of CPU. A synchronous hang cannot be timed out
    // inside jest, so a child process runs it and is killed at the deadline.
    const script = `
      const { readExif } = require('./functions/imaging/read-exif');
      const { exifWithMake } = require('./test/support/exif-blob');
      const make = Buffer.concat([Buffer.alloc(2_000_000), Buffer.from('x')]);
      process.stdout.write(JSON.stringify(readExif(exifWithMake(make))));`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: `${__dirname}/../../..`,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect({ signal: child.signal, stderr: child.stderr, stdout: child.stdout }).toEqual({
      signal: null,
      stderr: '',
      stdout: 'null',
    });
  }, 40_000);
});
