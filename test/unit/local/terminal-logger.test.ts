import { TerminalLogger } from '../../../local/terminal-logger';

describe("npm start's log on a terminal", () => {
  it('writes a request as one short line, and anything else as its level, message and fields, escaped', () => {
    const logger = new TerminalLogger({ serviceName: 'image-upload', logLevel: 'INFO' });
    const lines: string[] = [];
    logger.write = (line) => void lines.push(line);
    logger.info('request', {
      method: 'POST',
      path: '/api/1/upload',
      query: { key: '[redacted]', format: 'json' },
      status: 200,
      durationMs: 523,
      clientIp: '127.0.0.1',
    });
    logger.warn('CDN purge refused', { images: 3, error: new Error('throttled\u001b[2J') });
    logger
      .createChild()
      .info('request', { method: 'GET', path: '/image/Ab3dE', query: {}, status: 404, durationMs: 4, clientIp: '::1' });
    expect(lines).toEqual([
      expect.stringMatching(/^\d\d:\d\d:\d\d POST \/api\/1\/upload\?key=\[redacted\]&format=json 200 523 ms 127\.0\.0\.1\n$/),
      expect.stringMatching(/^\d\d:\d\d:\d\d WARN CDN purge refused images=3 error=Error: throttled\\u001b\[2J\n$/),
      expect.stringMatching(/^\d\d:\d\d:\d\d GET \/image\/Ab3dE 404 4 ms ::1\n$/),
    ]);
  });
});
