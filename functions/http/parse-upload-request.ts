import type { APIGatewayProxyEvent } from 'aws-lambda';
import { RequestError } from './request-errors';
import { parseFormat, type ResponseFormat, type SourceInput, type UploadRequest } from '../core/upload/upload-request';
import type { UploadUrlRequest } from '../core/upload/staged-uploads';
import { bodyBytes, headerValue, queryParameters } from './api-event';
import { mediaTypeOf } from './edge-contract';
import { parseMultipart, type FilePart } from './multipart';

const SOURCE_NAMES = ['source', 'image'] as const;
const FILE_NAMES: ReadonlySet<string> = new Set(SOURCE_NAMES);
/** Text fields other than a base64 source are short; the source may be a whole base64 image. */
const BASE64_OVERHEAD_BYTES = 4096;

export interface ParseLimits {
  maxUploadBytes: number;
}

interface Params {
  /** Query values, overridden by body values. */
  fields: Map<string, string>;
  /** Names of the text fields the body carried. */
  bodyFieldNames: Set<string>;
  files: Map<string, FilePart[]>;
  truncatedFields: Set<string>;
}

/** The response format a request asked for in its query, for errors found before its body is read. */
export function formatFromQuery(event: APIGatewayProxyEvent): ResponseFormat {
  return parseFormat(queryParameters(event).get('format'));
}

/** Reads an upload request from the query and the body (body values win); nothing is validated but the shape. */
export async function parseUploadRequest(
  event: APIGatewayProxyEvent,
  limits: ParseLimits,
  clientIp: string,
): Promise<UploadRequest> {
  const params = await readParams(event, limits);
  const { fields } = params;
  const header = headerValue(event, 'x-api-key')?.trim();
  return {
    key: header ? header : fields.get('key'),
    source: readSource(params),
    imgbb: fields.has('image') || params.files.has('image'),
    format: parseFormat(fields.get('format')),
    title: fields.get('title') ?? fields.get('name'),
    description: fields.get('description'),
    nsfw: fields.get('nsfw'),
    expiration: fields.get('expiration'),
    width: fields.get('width'),
    clientIp,
  };
}

/** Reads the first step of a two-step upload: the key, the declared `size` and an optional `filename`. */
export async function parseUploadUrlRequest(
  event: APIGatewayProxyEvent,
  limits: ParseLimits,
  clientIp: string,
): Promise<UploadUrlRequest & { key: string | undefined }> {
  const { fields } = await readParams(event, limits);
  const header = headerValue(event, 'x-api-key')?.trim();
  return { key: header ? header : fields.get('key'), size: fields.get('size'), filename: fields.get('filename'), clientIp };
}

async function readParams(event: APIGatewayProxyEvent, limits: ParseLimits): Promise<Params> {
  const fields = queryParameters(event);
  const body = bodyBytes(event);
  if (body.length === 0) return { fields, bodyFieldNames: new Set(), files: new Map(), truncatedFields: new Set() };
  const contentType = headerValue(event, 'content-type');
  switch (mediaTypeOf(contentType)) {
    case 'multipart/form-data': {
      const parsed = await parseMultipart(body, contentType ?? '', {
        maxFileBytes: limits.maxUploadBytes,
        maxFieldBytes: Math.ceil((limits.maxUploadBytes * 4) / 3) + BASE64_OVERHEAD_BYTES,
        fileNames: FILE_NAMES,
      });
      for (const [name, value] of parsed.fields) fields.set(name, value);
      return {
        fields,
        bodyFieldNames: new Set(parsed.fields.keys()),
        files: parsed.files,
        truncatedFields: parsed.truncatedFields,
      };
    }
    case 'application/x-www-form-urlencoded': {
      const bodyFieldNames = new Set<string>();
      for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
        fields.set(name, value);
        bodyFieldNames.add(name);
      }
      return { fields, bodyFieldNames, files: new Map(), truncatedFields: new Set() };
    }
    default:
      throw new RequestError(
        'UnsupportedBody',
        'Unsupported request body: send multipart/form-data or application/x-www-form-urlencoded',
      );
  }
}

function readSource(params: Params): SourceInput | undefined {
  const source = readSourceField(params);
  const token = params.fields.get('upload_token');
  if (token === undefined) return source;
  if (source !== undefined) throw new RequestError('TooManySources', 'Only one upload source is allowed');
  return { kind: 'staged', token };
}

function readSourceField({ fields, bodyFieldNames, files, truncatedFields }: Params): SourceInput | undefined {
  for (const name of SOURCE_NAMES) {
    const parts = files.get(name) ?? [];
    // A file part and a text field of one name in one body, or two file parts: which one was meant is unknowable.
    if (parts.length > 1 || (parts.length === 1 && bodyFieldNames.has(name))) {
      throw new RequestError('TooManySources', 'Only one upload source is allowed');
    }
    const [file] = parts;
    if (file) return { kind: 'file', bytes: file.bytes, filename: file.filename, truncated: file.truncated };
    const text = fields.get(name);
    if (text !== undefined) {
      // A base64 text past the field limit is an image past the size limit.
      return truncatedFields.has(name)
        ? { kind: 'file', bytes: Buffer.alloc(0), filename: '', truncated: true }
        : { kind: 'text', value: text };
    }
  }
  return undefined;
}
