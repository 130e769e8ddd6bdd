import SwaggerParser from '@apidevtools/swagger-parser';
import served from '../../functions/http/openapi.json';
import { ERROR_STATUS } from '../../functions/http/responses';
import { openapiFromYaml } from '../../scripts/openapi';
import { contractProblems } from '../support/contract';

type Schema = { allOf?: Schema[]; properties?: Record<string, Schema>; const?: unknown; enum?: unknown[] };
const document = openapiFromYaml() as { components: { schemas: Record<string, Schema> } };

/** The `status_code` and `error.code` values an ErrorNNN schema of the document allows. */
function documentedCodes(): Map<number, unknown[]> {
  const codes = new Map<number, unknown[]>();
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    if (!/^Error\d{3}$/.test(name)) continue;
    const refinement = schema.allOf?.[1]?.properties;
    const code = refinement?.['error']?.properties?.['code'];
    codes.set(Number(refinement?.['status_code']?.const), code?.enum ?? [code?.const]);
  }
  return codes;
}

const image = {
  name: 'cat',
  extension: 'png',
  size: 100,
  width: 10,
  height: 10,
  date: '2026-11-23 12:00:00',
  date_gmt: '2026-11-23 12:00:00',
  title: 'cat',
  description: null,
  nsfw: '0',
  storage_id: null,
  storage: 'datefolder',
  md5: 'a'.repeat(32),
  original_filename: 'cat.png',
  original_exifdata: null,
  views: '0',
  views_label: 'views',
  id_encoded: 'Ab3',
  filename: 'cat.png',
  ratio: 1,
  size_formatted: '100 B',
  mime: 'image/png',
  bits: 8,
  channels: 3,
  url: 'https://img.example/images/2026/11/23/cat.png',
  url_viewer: 'https://img.example/image/Ab3',
  url_short: 'https://img.example/image/Ab3',
  delete_url: 'https://img.example/image/Ab3/delete/t',
  thumb: {},
  medium: {},
  display_url: 'https://img.example/images/2026/11/23/cat.md.png',
  how_long_ago: 'moments ago',
  expiration_date_gmt: null,
  is_animated: '0',
};
const rendition = (suffix: string) => ({
  filename: `cat.${suffix}.png`,
  name: `cat.${suffix}`,
  width: 10,
  height: 10,
  ratio: 1,
  size: 50,
  size_formatted: '50 B',
  mime: 'image/png',
  extension: 'png',
  bits: 8,
  channels: 3,
  url: `https://img.example/images/2026/11/23/cat.${suffix}.png`,
});
const uploaded = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    status_code: 200,
    success: { message: 'image uploaded', code: 200 },
    image: { ...image, thumb: rendition('th'), medium: rendition('md'), ...fields },
    status_txt: 'OK',
  });
const json = 'application/json; charset=utf-8';

describe('docs/openapi.yaml', () => {
  it('is a valid OpenAPI 3.1 document (a maintained validator)', async () => {
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });

  it('is what the service serves (functions/http/openapi.json; npm run openapi writes it)', () => {
    expect(served).toEqual(document);
  });

  it('documents every error kind of the code with its status and Chevereto code', () => {
    const codes = documentedCodes();
    for (const [kind, { status, code }] of Object.entries(ERROR_STATUS)) {
      expect({ kind, status, codes: codes.get(status) }).toEqual({
        kind,
        status,
        codes: expect.arrayContaining([code]) as unknown,
      });
    }
  });
});

describe('the contract check of the tests', () => {
  it('passes a well-formed upload answer, and fails one with a field of the wrong type, missing or extra', () => {
    const check = (body: string) => contractProblems('POST', '/api/1/upload', { status: 200, contentType: json, body });
    expect(check(uploaded())).toEqual([]);
    expect(check(uploaded({ views: 0 })).join()).toContain('/image/views must be string');
    expect(check(uploaded({ md5: undefined })).join()).toContain("must have required property 'md5'");
    expect(check(uploaded({ surprise: 1 })).join()).toContain('must NOT have unevaluated properties');
  });

  it('fails an undocumented status or code, and checks pages and other methods', () => {
    const envelope = (status: number, code: number) =>
      JSON.stringify({ status_code: status, error: { message: 'x', code }, status_txt: 'Bad Request' });
    expect(contractProblems('POST', '/api/1/upload', { status: 418, contentType: json, body: '{}' }).join()).toContain(
      'status 418 is not documented',
    );
    expect(
      contractProblems('POST', '/api/1/upload', { status: 400, contentType: json, body: envelope(400, 999) }).join(),
    ).toContain('/error/code must be equal to one of the allowed values');
    expect(contractProblems('GET', '/image/Ab3', { status: 200, contentType: 'text/html', body: '<p>' })).toEqual([]);
    expect(contractProblems('GET', '/nowhere', { status: 404, contentType: 'text/html', body: '<p>' })).toEqual([]);
    expect(contractProblems('GET', '/nowhere', { status: 200, contentType: 'text/html', body: '<p>' })).not.toEqual([]);
    const notAllowed = JSON.stringify({
      status_code: 405,
      error: { message: 'Method not allowed', code: 405 },
      status_txt: 'Method Not Allowed',
    });
    expect(contractProblems('PUT', '/api/1/upload', { status: 405, contentType: json, body: notAllowed })).toEqual([]);
  });
});
