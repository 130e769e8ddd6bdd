import { runInNewContext } from 'node:vm';
import { Template } from 'aws-cdk-lib/assertions';
import fc from 'fast-check';
import { buildApp } from '../../lib/app';
import { isBinaryMediaType, maxBodyBytes } from '../../functions/http/edge-contract';

interface EdgeHeaders {
  [name: string]: { value: string };
}
interface EdgeResponse {
  statusCode: number;
  statusDescription: string;
  headers: EdgeHeaders;
  body: { encoding: string; data: string };
}
interface EdgeRequest {
  method: string;
  uri: string;
  headers: EdgeHeaders;
}

/** The CloudFront Function exactly as the synthesized template deploys it, run as CloudFront runs it. */
function deployedHandler(): (event: unknown) => EdgeRequest | EdgeResponse {
  const { stack } = buildApp({ context: { 'aws:cdk:bundling-stacks': [] } });
  const functions = Object.values(Template.fromStack(stack).findResources('AWS::CloudFront::Function')) as Array<{
    Properties: { FunctionCode: string };
  }>;
  expect(functions).toHaveLength(1);
  const code = functions[0]?.Properties.FunctionCode ?? '';
  // the runtime's limit on function code
  expect(Buffer.byteLength(code)).toBeLessThan(10_240);
  return runInNewContext(`${code}\nhandler`, {}) as (event: unknown) => EdgeRequest | EdgeResponse;
}

function viewerEvent(headers: Record<string, string>, ip = '198.51.100.7'): unknown {
  const lowered: EdgeHeaders = {};
  for (const [name, value] of Object.entries(headers)) lowered[name.toLowerCase()] = { value };
  return { version: '1.0', viewer: { ip }, request: { method: 'POST', uri: '/api/1/upload', headers: lowered } };
}

describe('the viewer-request CloudFront Function on the API', () => {
  const handler = deployedHandler();

  it('answers a multipart body over 4.6 MB at the edge with 413 in the envelope', () => {
    const answer = handler(viewerEvent({ 'Content-Type': 'multipart/form-data; boundary=x', 'Content-Length': '4600001' }));
    expect(answer).toMatchObject({ statusCode: 413, statusDescription: 'Payload Too Large' });
    const response = answer as EdgeResponse;
    expect(response.headers['content-type']?.value).toBe('application/json; charset=utf-8');
    expect(response.headers['x-content-type-options']?.value).toBe('nosniff');
    expect(response.body.encoding).toBe('text');
    expect(JSON.parse(response.body.data)).toEqual({
      status_code: 413,
      error: {
        message: 'Request too large - max 4.6 MB per request; larger images: the two-step upload (POST /api/1/upload-url)',
        code: 400,
      },
      status_txt: 'Payload Too Large',
    });
  });

  it('answers a urlencoded body over 6.2 MB with 413, and lets one of 6.2 MB through', () => {
    const over = handler(viewerEvent({ 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': '6200001' }));
    expect(JSON.parse((over as EdgeResponse).body.data)).toMatchObject({
      error: {
        message: 'Request too large - max 6.2 MB per request; larger images: the two-step upload (POST /api/1/upload-url)',
      },
    });
    const under = handler(viewerEvent({ 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': '6200000' }));
    expect(under).toMatchObject({ uri: '/api/1/upload' });
  });

  it("lets a request through with the viewer's IP written over whatever the client sent in x-viewer-address", () => {
    const request = handler(
      viewerEvent({ 'Content-Type': 'image/png', 'Content-Length': '4600000', 'X-Viewer-Address': '10.0.0.1' }, '2001:db8::5'),
    ) as EdgeRequest;
    expect(request.uri).toBe('/api/1/upload');
    expect(request.headers['x-viewer-address']).toEqual({ value: '2001:db8::5' });
    expect(request.headers['content-length']).toEqual({ value: '4600000' });
  });

  it('lets a request without Content-Length through (chunked: the gateway answers for it)', () => {
    expect(handler(viewerEvent({ 'Content-Type': 'multipart/form-data' }))).toMatchObject({ uri: '/api/1/upload' });
  });

  it('decides exactly as maxBodyBytes does, for any Content-Type and length', () => {
    const contentType = fc.oneof(
      fc.constantFrom(
        'multipart/form-data; boundary=----x',
        'Multipart/Form-Data',
        'image/png',
        'image/heic',
        'application/octet-stream',
        'application/x-www-form-urlencoded',
        'application/json',
        'text/plain; charset=utf-8',
        '',
      ),
      fc.string(),
    );
    fc.assert(
      fc.property(contentType, fc.integer({ min: 0, max: 12_000_000 }), (type, length) => {
        const answer = handler(viewerEvent({ 'Content-Type': type, 'Content-Length': String(length) }));
        const refused = 'statusCode' in answer;
        expect([type, isBinaryMediaType(type), length, refused]).toEqual([
          type,
          isBinaryMediaType(type),
          length,
          length > maxBodyBytes(type),
        ]);
      }),
      { numRuns: 2000 },
    );
  });
});
