import { EmfMetrics } from '../../../functions/adapters/emf-metrics';

/** Every line written to stdout while `run` runs. */
function stdoutLines(run: () => void): string[] {
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  });
  try {
    run();
  } finally {
    spy.mockRestore();
  }
  return lines;
}

describe('metrics in the embedded metric format', () => {
  const previous = process.env['POWERTOOLS_METRICS_DISABLED'];
  beforeAll(() => (process.env['POWERTOOLS_METRICS_DISABLED'] = 'false'));
  afterAll(() => (process.env['POWERTOOLS_METRICS_DISABLED'] = previous));

  it('writes buffered values in one line per flush, in the ImageUpload namespace, and nothing when there is nothing', () => {
    const metrics = new EmfMetrics('image-upload', {});
    const lines = stdoutLines(() => {
      metrics.add('UploadStored', 'Count', 1);
      metrics.add('S3Latency', 'Milliseconds', 12);
      metrics.add('S3Latency', 'Milliseconds', 30);
      metrics.flush();
      metrics.flush();
    });
    expect(lines).toHaveLength(1);
    const blob = JSON.parse(lines[0] ?? '') as Record<string, unknown> & {
      _aws: {
        CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }>;
      };
    };
    const [directive] = blob._aws.CloudWatchMetrics;
    expect(directive?.Namespace).toBe('ImageUpload');
    expect(directive?.Dimensions).toEqual([['service']]);
    expect(directive?.Metrics).toEqual(
      expect.arrayContaining([
        { Name: 'UploadStored', Unit: 'Count' },
        { Name: 'S3Latency', Unit: 'Milliseconds' },
      ]),
    );
    expect(blob['service']).toBe('image-upload');
    expect(blob['S3Latency']).toEqual([12, 30]);
  });

  it('writes in the namespace its environment names (a copy of the stack: its own name)', () => {
    const metrics = new EmfMetrics('image-upload', { POWERTOOLS_METRICS_NAMESPACE: 'ImageUploadStaging' });
    const lines = stdoutLines(() => metrics.add('UploadErrors', 'Count', 1, { name: 'Kind', value: 'FileTooBig' }));
    const blob = JSON.parse(lines[0] ?? '') as { _aws: { CloudWatchMetrics: Array<{ Namespace: string }> } };
    expect(blob._aws.CloudWatchMetrics[0]?.Namespace).toBe('ImageUploadStaging');
  });

  it('writes a value with a dimension at once, in a line of its own', () => {
    const metrics = new EmfMetrics('image-upload', {});
    const lines = stdoutLines(() => metrics.add('UploadErrors', 'Count', 1, { name: 'Kind', value: 'FileTooBig' }));
    expect(lines).toHaveLength(1);
    const blob = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    expect(blob['Kind']).toBe('FileTooBig');
    expect(blob['UploadErrors']).toBe(1);
  });
});
