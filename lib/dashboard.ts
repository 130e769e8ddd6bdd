import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { METRIC, storeLatencyMetric } from '../functions/core/metrics';
import { FIVE_MINUTES, type MonitoringProps, type Signals } from './monitoring-signals';

const STORES = ['S3', 'DynamoDB', 'SSM', 'CloudFront'] as const;

const graph = (title: string, left: cloudwatch.IMetric[], width = 8): cloudwatch.GraphWidget =>
  new cloudwatch.GraphWidget({ title, left, width, height: 6 });

/** The dashboard's rows: uploads and refusals; imaging and stores; the API function and the gateway; the sweep. */
export function serviceRow({ metric, namespace }: Signals): cloudwatch.IWidget[] {
  return [
    graph('Uploads', [
      metric(METRIC.uploadStored, { label: 'stored' }),
      metric(METRIC.uploadDuplicate, { label: 'duplicate' }),
      metric(METRIC.uploadRefused, { label: 'refused (4xx)' }),
      metric(METRIC.uploadFailed, { label: 'failed (5xx)' }),
    ]),
    graph('Refusals', [
      new cloudwatch.MathExpression({
        expression: `SEARCH('{${namespace},service,Kind} MetricName="${METRIC.uploadErrors}"', 'Sum', 300)`,
        label: 'by kind',
        period: FIVE_MINUTES,
      }),
      metric(METRIC.floodRefusals, { label: 'flood limits' }),
      metric(METRIC.urlFetchFailures, { label: 'URL fetch failures' }),
    ]),
    graph('Bytes stored', [metric(METRIC.bytesStored)]),
  ];
}

export function storesRow({ metric }: Signals): cloudwatch.IWidget[] {
  return [
    graph('Imaging time (ms)', [
      metric(METRIC.imagingTime, { statistic: 'p50', label: 'p50' }),
      metric(METRIC.imagingTime, { statistic: 'p99', label: 'p99' }),
      metric(METRIC.classifierTime, { statistic: 'p50', label: 'NSFW classifier p50' }),
    ]),
    graph(
      'Store latency p99 (ms)',
      STORES.map((store) => metric(storeLatencyMetric(store), { statistic: 'p99', label: store })),
    ),
    graph(
      'Store errors',
      STORES.map((store) => metric(METRIC.storeErrors, { dimensions: { Store: store }, label: store })),
    ),
  ];
}

export function gatewayRow(props: MonitoringProps, signals: Signals): cloudwatch.IWidget[] {
  return [
    graph('API function', [
      props.apiFunction.metricInvocations({ period: FIVE_MINUTES }),
      props.apiFunction.metricErrors({ period: FIVE_MINUTES }),
      props.apiFunction.metricThrottles({ period: FIVE_MINUTES }),
    ]),
    graph('API function duration (ms)', [
      props.apiFunction.metricDuration({ period: FIVE_MINUTES, statistic: 'p50' }),
      props.apiFunction.metricDuration({ period: FIVE_MINUTES, statistic: 'p99' }),
    ]),
    graph('Gateway', [
      props.api.metricCount({ period: FIVE_MINUTES }),
      props.api.metricClientError({ period: FIVE_MINUTES }),
      signals.gateway5xx,
      signals.gatewayThrottles,
    ]),
  ];
}

export function sweepRow(signals: Signals): cloudwatch.IWidget[] {
  const { metric } = signals;
  return [
    graph('Sweep', [
      metric(METRIC.sweepRemoved, { service: 'sweep', label: 'removed' }),
      metric(METRIC.sweepFailed, { service: 'sweep', label: 'failed' }),
      metric(METRIC.purgedPaths, { service: 'sweep', label: 'CDN paths purged' }),
      metric(METRIC.purgeFailures, { service: 'sweep', label: 'CDN purges refused' }),
    ]),
    graph('Sweep backlog age (s)', [metric(METRIC.sweepBacklogAge, { service: 'sweep', statistic: 'Maximum' })], 4),
    graph('DynamoDB throttles', [signals.tableThrottles], 6),
    graph('DynamoDB system errors', [signals.tableSystemErrors], 6),
  ];
}
