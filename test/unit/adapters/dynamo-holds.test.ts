import type { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoImageRepository } from '../../../functions/adapters/dynamo-image-repository';

// DynamoDB refuses an expression over 4 KB or over 300 operators, which the stand-ins do not check: a fake client
// takes the request as DynamoDB would receive it.
describe('DynamoImageRepository.writeHolds', () => {
  it("keeps its condition within DynamoDB's limits for an image answered to hundreds of uploads", async () => {
    const sent: UpdateCommand[] = [];
    const db = { send: async (command: UpdateCommand) => (sent.push(command), {}) } as unknown as DynamoDBDocumentClient;
    const tokens = Array.from({ length: 500 }, (_, n) => n.toString(16).padStart(64, '0'));
    await new DynamoImageRepository(db, 't').writeHolds(7, tokens, Object.fromEntries(tokens.map((hash) => [hash, null])), null);
    const condition = sent[0]?.input.ConditionExpression ?? '';
    expect(condition).toContain('size(deleteTokens) = :count');
    expect(condition).toContain('contains(deleteTokens, :t0)');
    expect(Buffer.byteLength(condition)).toBeLessThanOrEqual(4096);
    expect(condition.split(/ AND | OR |\(/).length).toBeLessThan(300);
    // the last tokens given are among those named
    expect(sent[0]?.input.ExpressionAttributeValues?.[':t63']).toBe(tokens[499]);
  });
});
