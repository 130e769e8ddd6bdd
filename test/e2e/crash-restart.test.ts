import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { makePng } from '../support/images';
import { freePort, startLocalProcess, type LocalProcess } from '../support/local-process';

jest.setTimeout(240_000);

const ROUNDS = 10;
const BURST = 8;
const NO_FLOOD = '{"minute":0,"hour":0,"day":0,"week":0,"month":0}';

interface Acknowledged {
  url: string;
  md5: string;
}

describe('npm start after a crash', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'crash-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const start = async (): Promise<LocalProcess> =>
    startLocalProcess({ PORT: String(await freePort()), DATA_DIR: dataDir, API_KEY: 'crash-key', FLOOD_LIMITS: NO_FLOOD });

  it('starts again every time it is killed during a burst of uploads, losing nothing it acknowledged', async () => {
    const acknowledged: Acknowledged[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const server = await start();
      let firstAnswer: () => void = () => undefined;
      const answered = new Promise<void>((resolve) => (firstAnswer = resolve));
      const uploads = Array.from({ length: BURST }, async (_, index) => {
        const bytes = await makePng(20 + round, 20 + index);
        const form = new FormData();
        form.append('key', 'crash-key');
        form.append('source', new Blob([bytes]), `crash-${round}-${index}.png`);
        try {
          const response = await fetch(`${server.url}/api/1/upload`, { method: 'POST', body: form });
          if (response.status !== 200) return;
          const { image } = (await response.json()) as { image: { url: string; md5: string } };
          acknowledged.push({ url: image.url, md5: image.md5 });
          firstAnswer();
        } catch {
          // killed before it answered: nothing was promised
        }
      });
      // killed at a different moment of the burst each round, after its first answer (a timer alone, on a loaded
      // machine, killed every round before any answer), or once every upload has ended
      await Promise.race([answered, Promise.all(uploads)]);
      await new Promise((resolve) => setTimeout(resolve, (round * 137) % 400));
      process.kill(server.pid, 'SIGKILL');
      await Promise.all(uploads);
    }
    expect(acknowledged.length).toBeGreaterThan(0);

    const server = await start();
    try {
      for (const image of acknowledged) {
        const path = new URL(image.url).pathname;
        const served = await fetch(`${server.url}${path}`);
        const md5 = createHash('md5')
          .update(new Uint8Array(await served.arrayBuffer()))
          .digest('hex');
        expect([path, served.status, md5]).toEqual([path, 200, image.md5]);
      }

      // every stored file is named by a record (pending ones are the sweep's to remove)
      const endpoints = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as Record<string, string>;
      const common = {
        region: 'us-east-1',
        credentials: { accessKeyId: endpoints['accessKeyId'] ?? '', secretAccessKey: endpoints['secretAccessKey'] ?? '' },
      };
      const s3 = new S3Client({ ...common, endpoint: endpoints['s3'] ?? '', forcePathStyle: true });
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await s3.send(new ListObjectsV2Command({ Bucket: endpoints['bucket'], ContinuationToken: token }));
        keys.push(...(page.Contents ?? []).map((object) => object.Key ?? ''));
        token = page.NextContinuationToken;
      } while (token);
      const db = DynamoDBDocumentClient.from(new DynamoDBClient({ ...common, endpoint: endpoints['dynamodb'] ?? '' }));
      const named = new Set<string>();
      let start: Record<string, unknown> | undefined;
      do {
        const page = await db.send(new ScanCommand({ TableName: endpoints['table'], ExclusiveStartKey: start }));
        for (const item of page.Items ?? []) {
          for (const file of ['original', 'thumb', 'medium']) {
            // an image's record names its files; a pending name claim, those its upload may have written
            const key =
              (item[file] as { key?: string } | undefined)?.key ?? (item['keys'] as Record<string, string> | undefined)?.[file];
            if (key) named.add(key);
          }
        }
        start = page.LastEvaluatedKey;
      } while (start);
      expect(keys.filter((key) => !named.has(key))).toEqual([]);
      s3.destroy();
      db.destroy();
    } finally {
      await server.stop();
    }
  });
});
