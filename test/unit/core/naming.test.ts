import { baseNameOf, cleanOriginalFilename, sanitizeName, titleFromFilename } from '../../../functions/core/upload/naming';

describe('sanitizeName', () => {
  it.each([
    ['sunset', 'sunset'],
    ['Crème brûlée', 'Creme-brulee'],
    ['my  cool\tphoto', 'my-cool-photo'],
    ['a/b\\c:d*e?f"g<h>i|j', 'abcdefghij'],
    ['日本語', ''],
    ['photo.th', 'photo'],
    ['photo.MD', 'photo'],
    ['a.th.md.th', 'a'],
    ['..hidden.', 'hidden'],
    ['.th', 'th'],
    ['x'.repeat(250), 'x'.repeat(200)],
    ['ﬁle', 'file'],
  ])('turns %j into %j', (input, expected) => {
    expect(sanitizeName(input)).toBe(expected);
  });

  it('never leaves a name whose key a rendition could take', () => {
    for (const input of ['a.th', 'a.md', 'a.th.', 'a.md..', 'a .th', 'a.md.th.md']) {
      expect(sanitizeName(input)).not.toMatch(/\.(th|md)$/i);
    }
  });
});

describe('file names', () => {
  it('keeps only the last path segment of a client file name, without control characters', () => {
    expect(cleanOriginalFilename('C:\\Users\\me\\Pictures\\cat.jpg')).toBe('cat.jpg');
    expect(cleanOriginalFilename('../../etc/passwd.jpg')).toBe('passwd.jpg');
    expect(cleanOriginalFilename('evil\r\nname.png')).toBe('evilname.png');
  });

  it('derives the base name and the title', () => {
    expect(baseNameOf('photo.final.JPG')).toBe('photo.final');
    expect(baseNameOf('.hidden')).toBe('.hidden');
    expect(baseNameOf('noext')).toBe('noext');
    expect(titleFromFilename('my_cool-photo.jpg')).toBe('my cool photo');
    expect(titleFromFilename('__a--b__.png')).toBe('a b');
  });
});
