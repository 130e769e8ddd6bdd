import busboy from 'busboy';
import { RequestError } from './request-errors';

export interface FilePart {
  bytes: Buffer;
  filename: string;
  /** The part went past the file size limit; `bytes` holds only its start. */
  truncated: boolean;
}

export interface MultipartBody {
  fields: Map<string, string>;
  /** Only the parts named in `fileNames`; others are read past and dropped. */
  files: Map<string, FilePart[]>;
  /** Names of text fields that went past the field size limit. */
  truncatedFields: Set<string>;
}

export interface MultipartLimits {
  maxFileBytes: number;
  maxFieldBytes: number;
  fileNames: ReadonlySet<string>;
}

const MAX_PARTS = 100;

function malformed(cause?: unknown): RequestError {
  return new RequestError('MalformedBody', 'Malformed multipart/form-data body', { cause });
}

/** Reads a whole multipart/form-data body with busboy, within limits. */
export function parseMultipart(body: Buffer, contentType: string, limits: MultipartLimits): Promise<MultipartBody> {
  return new Promise((resolve, reject) => {
    const result: MultipartBody = { fields: new Map(), files: new Map(), truncatedFields: new Set() };
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        defParamCharset: 'utf8',
        limits: { fileSize: limits.maxFileBytes, fieldSize: limits.maxFieldBytes, parts: MAX_PARTS, fieldNameSize: 200 },
      });
    } catch (error) {
      reject(malformed(error));
      return;
    }
    let failed: RequestError | undefined;
    parser.on('field', (name, value, info) => {
      result.fields.set(name, value);
      if (info.valueTruncated) result.truncatedFields.add(name);
    });
    parser.on('file', (name, stream, info) => {
      // A part cut short fails its stream as well as the parser; the parser's error is the one reported.
      stream.on('error', () => undefined);
      if (!limits.fileNames.has(name)) {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        // one chunk (the whole body fed at once gives one): its bytes as they are, not a copy
        const bytes = chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks);
        // A browser form with no file chosen sends an empty part with an empty file name: no file at all.
        if (bytes.length === 0 && !info.filename) return;
        const parts = result.files.get(name) ?? [];
        parts.push({ bytes, filename: info.filename ?? '', truncated: stream.truncated === true });
        result.files.set(name, parts);
      });
    });
    parser.on('partsLimit', () => {
      failed ??= new RequestError('MalformedBody', `Too many multipart parts - max ${MAX_PARTS}`);
    });
    parser.on('error', (error: unknown) => reject(failed ?? malformed(error)));
    parser.on('close', () => (failed ? reject(failed) : resolve(result)));
    parser.end(body);
  });
}
