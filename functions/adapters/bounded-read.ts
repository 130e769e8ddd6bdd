import type { Readable } from 'node:stream';

/**
 * A stream's bytes, or undefined as soon as they pass `maxBytes`: the stream is then destroyed, without reading on
 * (answered before the destroy, whose 'error' or 'aborted' would otherwise speak first). Fails on the stream's error,
 * or when an HTTP message is aborted.
 */
export function readUpTo(stream: Readable, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        resolve(undefined);
        chunks.length = 0;
        stream.destroy();
        return;
      }
      chunks.push(chunk);
    });
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
    stream.on('aborted', () => reject(new Error('aborted')));
  });
}
