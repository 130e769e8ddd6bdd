import { randomUUID } from 'node:crypto';
import type { Report, ReportList } from '../core/ports';
import { DynamoTable, retrySafe } from './dynamo-calls';
import { readItem } from './item-reader';
import { ITEM_PREFIX } from './table-schema';

const reportPk = (imageId: number, clientIp: string): string => `${ITEM_PREFIX.report}${imageId}#${clientIp}`;

/** Reports one item each, keyed by image and client, so that a client's second report of an image is refused. */
export class DynamoReports extends DynamoTable implements ReportList {
  add(report: Report): Promise<boolean> {
    const mark = randomUUID();
    const write = {
      Item: { pk: reportPk(report.imageId, report.clientIp), ...report, mark },
      ConditionExpression: 'attribute_not_exists(pk)',
    };
    return this.putIf('keep report', retrySafe(write, { mark }));
  }

  async *all(): AsyncIterable<Report[]> {
    for await (const items of this.scanPrefix('read reports', ITEM_PREFIX.report)) yield items.map(reportOf);
  }

  async resolve(imageId: number): Promise<number> {
    let removed = 0;
    for await (const items of this.scanPrefix('read reports', `${ITEM_PREFIX.report}${imageId}#`)) {
      for (const item of items) if (await this.deleteIf('remove report', String(item['pk']), {})) removed += 1;
    }
    return removed;
  }
}

function reportOf(item: Record<string, unknown>): Report {
  const read = readItem(item);
  return {
    imageId: read.number('imageId'),
    clientIp: read.string('clientIp'),
    reason: read.string('reason'),
    note: read.string('note'),
    atMs: read.number('atMs'),
  };
}
