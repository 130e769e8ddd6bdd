import { DependencyError, ServiceError, type ServiceErrorKind } from '../../../functions/core/errors';
import type { Logger } from '../../../functions/core/ports';
import { ERROR_STATUS, errorResponse } from '../../../functions/http/responses';

function recordingLogger(): Logger & { lines: Array<{ level: string; message: string; extra: unknown[] }> } {
  const lines: Array<{ level: string; message: string; extra: unknown[] }> = [];
  const log =
    (level: string) =>
    (message: string, ...extra: unknown[]): void => {
      lines.push({ level, message, extra });
    };
  return { lines, info: log('info'), warn: log('warn'), error: log('error') };
}

describe('errorResponse', () => {
  it.each(Object.entries(ERROR_STATUS) as Array<[ServiceErrorKind, { status: number; code: number }]>)(
    'maps %s to its status and code in the envelope',
    (kind, { status, code }) => {
      const response = errorResponse(new ServiceError(kind, 'a message'), 'json', recordingLogger());
      expect(response.statusCode).toBe(status);
      expect(JSON.parse(response.body)).toMatchObject({ status_code: status, error: { message: 'a message', code } });
    },
  );

  it('answers anything unexpected with 500 and a generic message, logging the error once', () => {
    const logger = recordingLogger();
    const response = errorResponse(new Error('SQL said: secret table name'), 'json', logger);
    expect(JSON.parse(response.body)).toEqual({
      status_code: 500,
      error: { message: 'Internal server error', code: 500 },
      status_txt: 'Internal Server Error',
    });
    expect(response.body).not.toContain('secret');
    expect(logger.lines).toHaveLength(1);
  });

  it('answers a store failure with 503 code 900 and never the SDK message', () => {
    const logger = recordingLogger();
    const sdkError = Object.assign(new Error('AccessDenied: arn:aws:iam::123456789012:role/x'), { name: 'AccessDenied' });
    const response = errorResponse(new DependencyError('S3 put', sdkError), 'json', logger);
    expect(response.statusCode).toBe(503);
    expect(JSON.parse(response.body)).toEqual({
      status_code: 503,
      error: { message: 'Service unavailable, try again', code: 900 },
      status_txt: 'Service Unavailable',
    });
    expect(response.body).not.toContain('arn:aws');
    expect(logger.lines[0]?.level).toBe('error');
  });

  it('sends Retry-After when the error carries one', () => {
    const response = errorResponse(
      new ServiceError('Flooding', 'slow down', { retryAfterSeconds: 42 }),
      'txt',
      recordingLogger(),
    );
    expect(response.headers?.['Retry-After']).toBe('42');
    expect(response.headers?.['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toBe('slow down');
  });
});
