import type { APIGatewayProxyEvent } from 'aws-lambda';
import { RequestError } from './request-errors';
import { parseFormat, type ResponseFormat, type SourceInput, type UploadRequest } from '../core/upload/upload-request';
import type { UploadUrlRequest } from '../core/upload/staged-uploads';
import { bodyBytes, headerValue, queryParameters } from './api-event';
import { mediaTypeOf } from './edge-contract';
import { parseMultipart, type FilePart } from './multipart';

const SOURCE_NAMES = ['source', 'image'] as const;
/** The file part's name of PicList's and PicGo's generic uploader: read only when neither source name is sent. */
const FALLBACK_FILE_NAME = 'file';
const FILE_NAMES: ReadonlySet<string> = new Set([...SOURCE_NAMES, FALLBACK_FILE_NAME]);
/**
 * A text source a client sends beside its file when it leaves its own placeholder unfilled (ShareX's `%input`,
 * `{input}` and older `$input$`, or nothing): the file part is the source, as Chevereto takes it.
 */
const UNFILLED_TEXT: ReadonlySet<string> = new Set(['', '%input', '{input}', '$input$']);
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
  const named = readSourceField(params);
  return {
    key: header ? header : fields.get('key'),
    source: withUploadToken(named?.input, fields.get('upload_token')),
    // `image` and `file` are the names of clients that read imgBB's shape (`data.url`)
    imgbb: fields.has('image') || params.files.has('image') || named?.name === FALLBACK_FILE_NAME,
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

function withUploadToken(source: SourceInput | undefined, token: string | undefined): SourceInput | undefined {
  if (token === undefined) return source;
  if (source !== undefined) throw tooManySources();
  return { kind: 'staged', token };
}

function tooManySources(): RequestError {
  return new RequestError('TooManySources', 'Only one upload source is allowed');
}

/** The source and the name it was sent under: `source`, else `image`, else a `file` part when neither was sent. */
function readSourceField(params: Params): { input: SourceInput; name: string } | undefined {
  for (const name of SOURCE_NAMES) {
    const input = readNamedSource(params, name);
    if (input) return { input, name };
  }
  if (SOURCE_NAMES.some((name) => params.fields.has(name))) return undefined;
  const input = readNamedSource(params, FALLBACK_FILE_NAME, false);
  return input && { input, name: FALLBACK_FILE_NAME };
}

function readNamedSource(
  { fields, bodyFieldNames, files, truncatedFields }: Params,
  name: string,
  textAllowed = true,
): SourceInput | undefined {
  const parts = files.get(name) ?? [];
  // Two file parts of one name, or a file part beside a real text value of its name: which was meant is unknowable.
  if (parts.length > 1) throw tooManySources();
  const [file] = parts;
  if (file) {
    if (bodyFieldNames.has(name) && !UNFILLED_TEXT.has((fields.get(name) ?? '').trim())) throw tooManySources();
    return { kind: 'file', bytes: file.bytes, filename: file.filename, truncated: file.truncated };
  }
  const text = textAllowed ? fields.get(name) : undefined;
  if (text === undefined) return undefined;
  // A base64 text past the field limit is an image past the size limit.
  return truncatedFields.has(name)
    ? { kind: 'file', bytes: Buffer.alloc(0), filename: '', truncated: true }
    : { kind: 'text', value: text };
}
