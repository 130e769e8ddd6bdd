import type { APIGatewayProxyEvent } from 'aws-lambda';

/** A header of the event, by case-insensitive name; the last value when it came more than once. */
export function headerValue(event: APIGatewayProxyEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  let found: string | undefined;
  for (const [key, values] of Object.entries(event.multiValueHeaders ?? {})) {
    if (key.toLowerCase() === wanted && values && values.length > 0) found = values[values.length - 1];
  }
  if (found !== undefined) return found;
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && value !== undefined) found = value;
  }
  return found;
}

/** Query parameters; a repeated name keeps its last value, as PHP does. */
export function queryParameters(event: APIGatewayProxyEvent): Map<string, string> {
  const params = new Map<string, string>();
  const multi = event.multiValueQueryStringParameters;
  if (multi) {
    for (const [name, values] of Object.entries(multi)) {
      const last = values?.[values.length - 1];
      if (last !== undefined) params.set(name, last);
    }
    return params;
  }
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value !== undefined) params.set(name, value);
  }
  return params;
}

/**
 * Where a caller in the same process (the local server) hands over a binary body's bytes as they came, sparing their
 * base64 round trip (`docs/local.md`). A Lambda event is JSON, which cannot carry a symbol: in AWS it is never there.
 */
export const RAW_BODY = Symbol.for('image-upload.raw-body');

/** An event with its body's bytes at hand. */
export type EventWithRawBody = APIGatewayProxyEvent & { [RAW_BODY]?: Buffer };

/** The raw body bytes; empty when there is none. */
export function bodyBytes(event: EventWithRawBody): Buffer {
  const raw = event[RAW_BODY];
  if (raw !== undefined) return raw;
  if (event.body === null || event.body === '') return Buffer.alloc(0);
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
}
