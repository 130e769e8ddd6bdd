import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Duration } from 'aws-cdk-lib';
import { METRIC_SERVICE } from '../functions/core/metrics';

/** What the alarms and the dashboard read (`monitoring.ts`, `dashboard.ts`): the stack's resources and its metrics. */

export interface MonitoringProps {
  /** The namespace of the service's own metrics: the stack's name, so that two copies in a region share none. */
  namespace: string;
  apiFunction: lambda.IFunction;
  sweepFunction: lambda.IFunction;
  api: apigateway.RestApi;
  /** The stage's access logs, JSON with `errorType` (the gateway's own error, THROTTLED among them). */
  accessLogs: logs.ILogGroup;
  table: dynamodb.TableV2;
  /** Where alarms are sent by e-mail; none: the topic only. */
  alarmEmail: string | undefined;
  /** A topic of the operator's that gets the alarms; none: a topic of the stack's. */
  alarmTopicArn: string | undefined;
  /** The account's Lambda concurrency quota (`accountConcurrency`): an alarm when the account nears it. */
  accountConcurrency: number;
  /** The API function's timeout: an alarm when an invocation nears it. */
  apiTimeout: Duration;
  /** The metric dimensions of the firewall's rate rule, if there is one: an alarm when that rule refuses viewers. */
  firewallRate: { WebACL: string; Rule: string } | undefined;
}

export const FIVE_MINUTES = Duration.minutes(5);

type MetricOptions = {
  service?: keyof typeof METRIC_SERVICE;
  statistic?: string;
  dimensions?: Record<string, string>;
  label?: string;
};

/** The service's own metrics (embedded metric format) of a namespace, of the API's or the sweep's `service`. */
export type ServiceMetric = (name: string, options?: MetricOptions) => cloudwatch.Metric;

export function serviceMetrics(namespace: string): ServiceMetric {
  return (name, options = {}) =>
    new cloudwatch.Metric({
      namespace,
      metricName: name,
      dimensionsMap: { service: METRIC_SERVICE[options.service ?? 'api'], ...options.dimensions },
      statistic: options.statistic ?? 'Sum',
      period: FIVE_MINUTES,
      ...(options.label ? { label: options.label } : {}),
    });
}

/** The metrics that alarms and dashboard share: the service's own, the gateway's throttles and 5xx, DynamoDB's. */
export interface Signals {
  metric: ServiceMetric;
  namespace: string;
  gatewayThrottles: cloudwatch.IMetric;
  gateway5xx: cloudwatch.IMetric;
  tableThrottles: cloudwatch.IMetric;
  tableSystemErrors: cloudwatch.IMetric;
}
