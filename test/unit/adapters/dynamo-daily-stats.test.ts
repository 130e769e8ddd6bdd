import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDailyStats } from '../../../functions/adapters/dynamo-daily-stats';

// DynamoDB leaves keys of a batch read unprocessed when it throttles, which the stand-ins never do: a fake client
// answers the way DynamoDB does then.
function fakeClient(answers: Array<Record<string, unknown>>): { db: DynamoDBDocumentClient; requests: unknown[] } {
  const requests: unknown[] = [];
  const db = {
    send: async (command: BatchGetCommand) => {
      requests.push(command.input.RequestItems?.['t']?.Keys);
      return answers.shift() ?? {};
    },
  } as unknown as DynamoDBDocumentClient;
  return { db, requests };
}

describe('DynamoDailyStats.read', () => {
  it('asks again for the days DynamoDB left unprocessed', async () => {
    const { db, requests } = fakeClient([
      {
        Responses: { t: [{ pk: 'STATS#2026-11-22', uploads: 3, bytes: 300 }] },
        UnprocessedKeys: { t: { Keys: [{ pk: 'STATS#2026-11-23' }] } },
      },
      { Responses: { t: [{ pk: 'STATS#2026-11-23', uploads: 1, bytes: 10, refusals: 2, unauthenticated: 7, reports: 4 }] } },
    ]);
    const figures = await new DynamoDailyStats(db, 't').read(['2026-11-22', '2026-11-23']);
    expect(Object.fromEntries(figures)).toEqual({
      '2026-11-22': { uploads: 3, bytes: 300, refusals: 0, unauthenticated: 0, reports: 0 },
      '2026-11-23': { uploads: 1, bytes: 10, refusals: 2, unauthenticated: 7, reports: 4 },
    });
    expect(requests).toEqual([[{ pk: 'STATS#2026-11-22' }, { pk: 'STATS#2026-11-23' }], [{ pk: 'STATS#2026-11-23' }]]);
  });

  it('fails rather than answer zeros for days it could not read', async () => {
    const left = { UnprocessedKeys: { t: { Keys: [{ pk: 'STATS#2026-11-23' }] } } };
    const { db } = fakeClient(Array.from({ length: 5 }, () => left));
    await expect(new DynamoDailyStats(db, 't').read(['2026-11-23'])).rejects.toMatchObject({
      what: 'read daily figures',
      cause: { message: '1 items left unread after 5 tries' },
    });
  });
});
