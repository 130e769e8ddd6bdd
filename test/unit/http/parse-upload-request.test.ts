import { parseUploadRequest } from '../../../functions/http/parse-upload-request';
import { RequestError } from '../../../functions/http/request-errors';
import { eventFrom, PUBLIC_URL } from '../../support/test-service';

const limits = { maxUploadBytes: 1000 };

async function parse(request: Request) {
  const event = await eventFrom(request);
  return parseUploadRequest(event, limits, event.requestContext.identity.sourceIp);
}

function form(entries: Array<[string, string | Blob, string?]>): FormData {
  const data = new FormData();
  for (const [name, value, filename] of entries) {
    if (typeof value === 'string') data.append(name, value);
    else data.append(name, value, filename);
  }
  return data;
}

describe('parseUploadRequest', () => {
  it('reads a ShareX multipart body: the file part, its name, the key and the format', async () => {
    const body = form([
      ['key', 'k1'],
      ['format', 'json'],
      ['source', new Blob([Buffer.from('abc')]), 'shot 1.png'],
    ]);
    const request = await parse(new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'POST', body }));
    expect(request).toMatchObject({ key: 'k1', format: 'json', imgbb: false, clientIp: '203.0.113.7' });
    expect(request.source).toMatchObject({ kind: 'file', filename: 'shot 1.png', truncated: false });
    expect(Buffer.from((request.source as { bytes: Uint8Array }).bytes).toString()).toBe('abc');
  });

  it('lets body values win over query values', async () => {
    const body = new URLSearchParams({ title: 'from body', source: 'QUJD' });
    const request = await parse(
      new Request(`${PUBLIC_URL}/api/1/upload?title=from+query&format=txt&nsfw=1`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body,
      }),
    );
    expect(request).toMatchObject({ title: 'from body', format: 'txt', nsfw: '1', source: { kind: 'text', value: 'QUJD' } });
  });

  it('keeps a plus sign that arrived as a space for the base64 rules to restore', async () => {
    const request = await parse(
      new Request(`${PUBLIC_URL}/api/1/upload`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'source=ab+cd&key=k',
      }),
    );
    expect(request.source).toEqual({ kind: 'text', value: 'ab cd' });
  });

  it('takes the title from name when there is no title, and the key from the X-API-Key header first', async () => {
    const request = await parse(
      new Request(`${PUBLIC_URL}/api/1/upload?name=Named&key=param`, { headers: { 'X-Api-Key': 'header' } }),
    );
    expect(request).toMatchObject({ title: 'Named', key: 'header' });
  });

  it('switches to imgBB mode for an image text value or an image file part', async () => {
    expect((await parse(new Request(`${PUBLIC_URL}/api/1/upload?image=QUJD`))).imgbb).toBe(true);
    const body = form([['image', new Blob([Buffer.from('abc')]), 'a.png']]);
    const request = await parse(new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'POST', body }));
    expect(request.imgbb).toBe(true);
    expect(request.source).toMatchObject({ kind: 'file', filename: 'a.png' });
  });

  it("takes the file over an empty or unfilled placeholder text source, in either order (Chevereto's ShareX form)", async () => {
    for (const placeholder of ['', '%input', '{input}', '$input$', ' %input ']) {
      const file = new Blob([Buffer.from('abc')]);
      for (const entries of [
        [
          ['source', placeholder],
          ['source', file, 'shot.png'],
        ],
        [
          ['source', file, 'shot.png'],
          ['source', placeholder],
        ],
      ] as Array<Array<[string, string | Blob, string?]>>) {
        const request = await parse(new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'POST', body: form(entries) }));
        expect([placeholder, request.source]).toMatchObject([placeholder, { kind: 'file', filename: 'shot.png' }]);
        expect(request.imgbb).toBe(false);
      }
    }
  });

  it('refuses a file beside a real text source of its name, or two files, in either order', async () => {
    const file = new Blob([Buffer.from('abc')]);
    const cases: Array<Array<[string, string | Blob, string?]>> = [
      [
        ['source', 'https://example.com/a.png'],
        ['source', file, 'a.png'],
      ],
      [
        ['source', file, 'a.png'],
        ['source', 'QUJD'],
      ],
      [
        ['source', file, 'a.png'],
        ['source', '%input%'],
      ],
      [
        ['image', file, 'a.png'],
        ['image', 'QUJD'],
      ],
      [
        ['source', file, 'a.png'],
        ['source', file, 'b.png'],
      ],
      [
        ['file', file, 'a.png'],
        ['file', file, 'b.png'],
      ],
    ];
    for (const entries of cases) {
      const parsing = parse(new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'POST', body: form(entries) }));
      await expect(parsing).rejects.toBeInstanceOf(RequestError);
      await expect(parsing).rejects.toMatchObject({ kind: 'TooManySources' });
    }
  });

  it("reads a file part named file as the source when neither source nor image is sent, in imgBB's shape", async () => {
    const body = form([['file', new Blob([Buffer.from('abc')]), 'picgo.png']]);
    const request = await parse(new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'POST', body }));
    expect(request).toMatchObject({ imgbb: true, source: { kind: 'file', filename: 'picgo.png' } });
    // a source sent, even in the query, is the source; the file part is then an unknown parameter
    const both = form([
      ['file', new Blob([Buffer.from('abc')]), 'picgo.png'],
      ['source', 'QUJD'],
    ]);
    const withSource = await parse(new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'POST', body: both }));
    expect(withSource).toMatchObject({ imgbb: false, source: { kind: 'text', value: 'QUJD' } });
    const queried = await parse(new Request(`${PUBLIC_URL}/api/1/upload?source=`, { method: 'POST', body }));
    expect(queried).toMatchObject({ imgbb: false, source: { kind: 'text', value: '' } });
    // a text value named file is no source
    const text = form([['file', 'QUJD']]);
    expect((await parse(new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'POST', body: text }))).source).toBeUndefined();
  });

  it('treats the empty file part of a browser form with no file chosen as no file', async () => {
    const body = form([
      ['source', new Blob([]), ''],
      ['key', 'k'],
    ]);
    const request = await parse(new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'POST', body }));
    expect(request.source).toBeUndefined();
  });

  it('marks a file past the size limit as truncated, and a base64 field past it as well', async () => {
    const big = form([['source', new Blob([Buffer.alloc(1001)]), 'big.png']]);
    expect((await parse(new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'POST', body: big }))).source).toMatchObject({
      kind: 'file',
      truncated: true,
    });
    const longText = form([['source', 'A'.repeat(1334 + 4097)]]);
    expect((await parse(new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'POST', body: longText }))).source).toMatchObject({
      kind: 'file',
      truncated: true,
    });
  });

  it('decodes UTF-8 file names', async () => {
    const body = form([['source', new Blob([Buffer.from('abc')]), 'café ☕.png']]);
    const request = await parse(new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'POST', body }));
    expect(request.source).toMatchObject({ filename: 'café ☕.png' });
  });
});
