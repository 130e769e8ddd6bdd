import { spawnSync } from 'node:child_process';
import { readExif } from '../../../functions/imaging/read-exif';
import { ASCII_TAG, exifBlock, exifWithMake, type IfdName } from '../../support/exif-blob';

/** Runs `script` in a child (tsx) that is killed at `deadlineMs`: a synchronous hang cannot be timed out inside jest. */
function runWithDeadline(script: string, deadlineMs: number) {
  const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: `${__dirname}/../../..`,
    encoding: 'utf8',
    timeout: deadlineMs,
  });
  return { signal: child.signal, stderr: child.stderr, stdout: child.stdout };
}

const texts = (ifd: IfdName, count: number, length: number) =>
  Array.from({ length: count }, (_, index) => ({ tag: ASCII_TAG[ifd], text: String(index).padEnd(length, 'x') }));

describe('EXIF strings', () => {
  it('drops the NULs that end a string and keeps the text', () => {
    expect(readExif(exifWithMake('TestCam\0\0'))).toEqual({ Make: 'TestCam' });
  });

  it('leaves out a string with NULs inside it', () => {
    expect(readExif(exifWithMake('Test\0\0Cam'))).toBeNull();
  });

  it('reads a string of 900,000 NULs and one letter in linear time (a child with a deadline runs it)', () => {
    // A `/\0+$/` trim is quadratic on this string: minutes of CPU. (Under the 1 MB a block may have, so it is read.)
    const script = `
      const { readExif } = require('./functions/imaging/read-exif');
      const { exifWithMake } = require('./test/support/exif-blob');
      const make = '\\0'.repeat(900_000) + 'x';
      process.stdout.write(JSON.stringify(readExif(exifWithMake(make))));`;
    expect(runWithDeadline(script, 30_000)).toEqual({ signal: null, stderr: '', stdout: 'null' });
  }, 40_000);
});

describe('EXIF blocks whose entries read the same bytes again and again', () => {
  // exif-reader reads each entry's value wherever it points, as often as it is pointed at
  it.each<IfdName>(['ifd0', 'next', 'exif', 'gps', 'interop'])(
    'are left out whole when the entries of the %s IFD share their bytes, and read when each has its own',
    (ifd) => {
      const model = { tag: 0x0110, text: 'Model-1' };
      expect(readExif(exifBlock({ ifd0: [model], [ifd]: texts(ifd, 40, 200) }, 'shared'))).toBeNull();
      const read = readExif(exifBlock({ ifd0: [model], [ifd]: texts(ifd, 40, 20) }, 'own'));
      expect(read).not.toBeNull();
      // the next IFD (a thumbnail's) is read by exif-reader but not shown
      if (ifd !== 'next' && ifd !== 'ifd0') expect(Object.values(read ?? {})).toContain('39'.padEnd(20, 'x'));
    },
  );

  it('are left out in linear time: 30,000 entries of 200 KB each (a child with a deadline runs it)', () => {
    // read as they point, these would be 6 GB of strings: about 40 s of CPU
    const script = `
      const { readExif } = require('./functions/imaging/read-exif');
      const { exifBlock } = require('./test/support/exif-blob');
      const entries = Array.from({ length: 30_000 }, () => ({ tag: 0x010f, text: 'x'.repeat(200_000) }));
      process.stdout.write(JSON.stringify(readExif(exifBlock({ ifd0: entries }, 'shared'))));`;
    expect(runWithDeadline(script, 20_000)).toEqual({ signal: null, stderr: '', stdout: 'null' });
  }, 30_000);

  it('leaves out a block over 1 MB, which no camera writes', () => {
    const block = exifBlock({ ifd0: [{ tag: 0x010f, text: 'TestCam' }] });
    expect(readExif(Buffer.concat([block, Buffer.alloc(1024 * 1024 - block.length)]))).toEqual({ Make: 'TestCam' });
    expect(readExif(Buffer.concat([block, Buffer.alloc(1024 * 1024 - block.length + 1)]))).toBeNull();
  });
});
