import { ENVELOPE_HEADERS, envelopeJson } from '../functions/http/error-envelope';
import { BINARY_MEDIA_TYPES, maxBodyBytes, requestTooLargeMessage, VIEWER_ADDRESS_HEADER } from '../functions/http/edge-contract';

/** A Content-Type of each kind, to read the limits of `maxBodyBytes` off. */
const BINARY_EXAMPLE = 'multipart/form-data';
const TEXT_EXAMPLE = 'application/x-www-form-urlencoded';

/** The edge's 413 for a body over the limit, as a CloudFront Functions response. */
function tooLarge(maxBytes: number): unknown {
  const headers: Record<string, { value: string }> = {};
  for (const [name, value] of Object.entries(ENVELOPE_HEADERS)) headers[name.toLowerCase()] = { value };
  const data = envelopeJson(413, 400, requestTooLargeMessage(maxBytes));
  return { statusCode: 413, statusDescription: 'Payload Too Large', headers, body: { encoding: 'text', data } };
}

/**
 * The CloudFront Function (JavaScript runtime 2.0) on every viewer request the API gets:
 * - a request whose Content-Length is over what the function's event can carry (`maxBodyBytes`) is answered here,
 *   413 in the contract's envelope, instead of API Gateway's own `{"message":"Request Too Long"}`;
 * - the viewer's IP is written into `x-viewer-address`, over anything a client sent in it.
 * Content-Length is a read-only header that viewer-request functions can read. A request without it (chunked) goes
 * on, and API Gateway answers for it if it is too long.
 */
export function viewerRequestCode(): string {
  const binaryMax = maxBodyBytes(BINARY_EXAMPLE);
  const textMax = maxBodyBytes(TEXT_EXAMPLE);
  return `var BINARY = ${JSON.stringify(BINARY_MEDIA_TYPES)};
var LIMITS = { binary: ${binaryMax}, text: ${textMax} };
var TOO_LARGE = { binary: ${JSON.stringify(tooLarge(binaryMax))}, text: ${JSON.stringify(tooLarge(textMax))} };
function isBinary(contentType) {
  var type = contentType.split(';')[0].trim().toLowerCase();
  for (var i = 0; i < BINARY.length; i++) {
    var pattern = BINARY[i];
    if (type === pattern || (pattern.slice(-2) === '/*' && type.indexOf(pattern.slice(0, -1)) === 0)) return true;
  }
  return false;
}
function handler(event) {
  var request = event.request;
  var length = request.headers['content-length'];
  if (length) {
    var type = request.headers['content-type'];
    var kind = isBinary(type ? type.value : '') ? 'binary' : 'text';
    if (Number(length.value) > LIMITS[kind]) return TOO_LARGE[kind];
  }
  request.headers['${VIEWER_ADDRESS_HEADER}'] = { value: event.viewer.ip };
  return request;
}
`;
}
