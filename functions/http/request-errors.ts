/** Ways a request fails that only the HTTP layer can tell: its route, its method, the shape of its body, its origin. */
export type RequestErrorKind =
  | 'InvalidVersion'
  | 'InvalidAction'
  | 'MethodNotAllowed'
  | 'TooManySources'
  | 'MalformedBody'
  | 'UnsupportedBody'
  | 'Forbidden'
  | 'CrossSite';

/** A request the HTTP layer refuses before any rule of the service is applied; the message is safe to show. */
export class RequestError extends Error {
  constructor(
    readonly kind: RequestErrorKind,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'RequestError';
  }
}

/** A method the path does not take: answered 405 with `Allow`, the methods it takes (`ROUTES` in `router.ts`). */
export class MethodNotAllowed extends RequestError {
  constructor(readonly allow: readonly string[]) {
    super('MethodNotAllowed', 'Method not allowed');
  }
}
