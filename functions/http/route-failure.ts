import type { ResponseFormat } from '../core/upload/upload-request';

/**
 * How a route answers its errors: in the envelope (before any route: the origin check's SSM read, a bug), as the API
 * answers (in the format asked, with CORS, counted as a refusal of a request that gave `key`), as a page (404 page,
 * or an error page), or as a delete link answers (JSON when asked, else a 404 page or text).
 */
export type Answering =
  | { by: 'envelope'; cors?: Record<string, string> | undefined }
  | { by: 'api'; format: ResponseFormat; cors: Record<string, string> | undefined; key?: string | undefined }
  | { by: 'page' }
  | { by: 'link'; json: boolean };

/** A route's error, with how that route answers it: the router answers what was thrown, as it says (`router.ts`). */
export class RouteFailure extends Error {
  constructor(
    readonly failure: unknown,
    readonly answering: Answering,
  ) {
    super('a route failed', { cause: failure });
    this.name = 'RouteFailure';
  }
}

/**
 * A route's work, whose failure is answered as `answering` says: an error thrown within a narrower step (one that
 * knows more, as the format a body asked for) keeps that step's answering.
 */
export async function answeredAs<T>(answering: Answering, work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw error instanceof RouteFailure ? error : new RouteFailure(error, answering);
  }
}
