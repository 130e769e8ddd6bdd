import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import openapi from '../../functions/http/openapi.json';

/**
 * The answers of the service checked against `docs/openapi.yaml` (as the service serves it): the operation of the
 * request's method and path, the response of its status, the schema of its content type. The integration suites run
 * every answer through it (`TestService.send`), the end-to-end suites the answers they read, so the document and the
 * code cannot drift apart unnoticed.
 */
type Document = {
  paths: Record<string, Record<string, { responses?: Record<string, ResponseObject> }>>;
};
type ResponseObject = { $ref?: string; content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> };

const document = openapi as unknown as Document;
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema(openapi, 'openapi');
const compiled = new Map<string, ValidateFunction>();

/** The path template of the document that a request path matches (`/image/{idOrSlug}` for `/image/Ab3`). */
function templateOf(path: string): string | undefined {
  const exact = path.replace(/\/+$/, '') || '/';
  if (document.paths[exact]) return exact;
  return Object.keys(document.paths).find((template) => {
    if (!template.includes('{')) return false;
    const pattern = template
      .split('/')
      .map((segment) => (segment.startsWith('{') ? '[^/]+' : segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
      .join('/');
    const wide = template.startsWith('/images/') ? pattern.replace('[^/]+', '.+') : pattern;
    return new RegExp(`^${wide}$`).test(exact);
  });
}

const escape = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1');

/** A response object, and the JSON pointer of where it is written (a `$ref` to the shared responses followed). */
function resolve(response: ResponseObject, pointer: string): { response: ResponseObject; pointer: string } {
  if (!response.$ref) return { response, pointer };
  const name = response.$ref.replace('#/components/responses/', '');
  const shared = (openapi as unknown as { components: { responses: Record<string, ResponseObject> } }).components.responses;
  return { response: shared[name] as ResponseObject, pointer: `/components/responses/${escape(name)}` };
}

export interface ContractAnswer {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** What is wrong with an answer for the document; an empty list when it matches. */
export function contractProblems(method: string, path: string, answer: ContractAnswer): string[] {
  const template = templateOf(new URL(path, 'http://x').pathname);
  if (!template) {
    // any other path: the "Not found" page, as the document's description says
    const page = answer.status === 404 && (answer.contentType ?? '').startsWith('text/html');
    return page ? [] : [`${method} ${path}: no path of the document matches, and the answer is no 404 page`];
  }
  const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const operation = document.paths[template]?.[verb];
  // a method the path does not list: 405, as the document's description says
  const responses = operation?.responses ?? { '405': { $ref: '#/components/responses/MethodNotAllowed' } };
  const declared = responses[String(answer.status)];
  if (!declared) return [`${method} ${template}: status ${answer.status} is not documented`];
  const { response, pointer } = resolve(declared, `/paths/${escape(template)}/${verb}/responses/${answer.status}`);
  if (!response.content) return answer.body === '' ? [] : [`${method} ${template} ${answer.status}: documented without a body`];
  const mediaType = (answer.contentType ?? '').split(';')[0]?.trim() ?? '';
  if (!response.content[mediaType])
    return [`${method} ${template} ${answer.status}: content type ${mediaType} is not documented`];
  if (mediaType !== 'application/json') return [];
  // compiled by reference into the whole document, so that its own `$ref`s resolve there
  const key = `openapi#${pointer}/content/${escape(mediaType)}/schema`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile({ $ref: key });
    compiled.set(key, validate);
  }
  if (validate(JSON.parse(answer.body))) return [];
  return (validate.errors ?? []).map(
    (error) => `${method} ${template} ${answer.status}: ${error.instancePath || '(body)'} ${error.message ?? ''}`,
  );
}

/** Throws, listing what is wrong, when an answer does not match the document. */
export function expectContract(method: string, path: string, answer: ContractAnswer): void {
  const problems = contractProblems(method, path, answer);
  if (problems.length > 0) throw new Error(`the answer does not match docs/openapi.yaml:\n${problems.join('\n')}`);
}
