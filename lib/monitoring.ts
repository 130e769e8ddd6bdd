import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { gatewayRow, serviceRow, storesRow, sweepRow } from './dashboard';
import { FIVE_MINUTES, serviceMetrics, type MonitoringProps, type Signals } from './monitoring-signals';
import { METRIC } from '../functions/core/metrics';
import { acknowledgeServerless } from './nag-suppressions';

/** The sweep runs every 5 minutes and removes due records at once: older than this, it is not keeping up. */
const SWEEP_BACKLOG_ALARM_SECONDS = 15 * 60;
/** Share of the account's concurrency, or of the API's timeout, past which an alarm warns that the limit is near. */
const NEAR_LIMIT = 0.8;
/** Five-minute periods without one sweep run: the schedule runs it every 5 minutes. */
const SWEEP_SILENT_PERIODS = 3;

/**
 * Tells the operator when the service is unwell: alarms on function errors and 5xx answers, throttles of the function
 * and the gateway, DynamoDB throttles and system errors, the sweep's failures and backlog, and SSM read failures, to
 * an SNS topic (and an e-mail address, if given); and a dashboard of the same figures.
 */
export class Monitoring extends Construct {
  readonly topic: sns.ITopic;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.topic = props.alarmTopicArn
      ? sns.Topic.fromTopicArn(this, 'Alarms', props.alarmTopicArn)
      : new sns.Topic(this, 'Alarms', { displayName: 'Image upload service alarms', enforceSSL: true });
    if (props.alarmEmail) {
      this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
      acknowledgeServerless(
        this,
        'SNSRedrivePolicy',
        "An e-mail subscription: a message SNS cannot deliver after its retries leaves the alarm's state in CloudWatch and on the dashboard; a dead-letter queue would be one more place no one reads.",
      );
    }
    const signals = this.signalsOf(props);
    this.addAlarms(props, signals);
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.days(1),
      widgets: [
        serviceRow(signals),
        storesRow(signals),
        gatewayRow(props, signals),
        sweepRow(signals),
        [new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 })],
      ],
    });
  }

  /** The metrics that alarms and dashboard share: the gateway's throttles (from its access log) and 5xx, DynamoDB's. */
  private signalsOf(props: MonitoringProps): Signals {
    const gatewayThrottles = new logs.MetricFilter(this, 'GatewayThrottles', {
      logGroup: props.accessLogs,
      filterPattern: logs.FilterPattern.stringValue('$.errorType', '=', 'THROTTLED'),
      metricNamespace: props.namespace,
      metricName: 'GatewayThrottles',
      metricValue: '1',
      defaultValue: 0,
    }).metric({ statistic: 'Sum', period: FIVE_MINUTES });
    const operations = [
      dynamodb.Operation.GET_ITEM,
      dynamodb.Operation.PUT_ITEM,
      dynamodb.Operation.UPDATE_ITEM,
      dynamodb.Operation.DELETE_ITEM,
      dynamodb.Operation.QUERY,
    ];
    return {
      metric: serviceMetrics(props.namespace),
      namespace: props.namespace,
      gatewayThrottles,
      gateway5xx: props.api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }),
      tableThrottles: props.table.metricThrottledRequestsForOperations({ operations, period: FIVE_MINUTES }),
      tableSystemErrors: props.table.metricSystemErrorsForOperations({ operations, period: FIVE_MINUTES }),
    };
  }

  /** Each alarm of `alarmsOf`, to the topic, on breach and on recovery. */
  private addAlarms(props: MonitoringProps, signals: Signals): void {
    for (const { id, description, metric, threshold, silence } of alarmsOf(props, signals, Stack.of(this).region)) {
      // an alarm on silence (no run of the sweep) breaches when the metric is missing; the others take it as calm
      const created = new cloudwatch.Alarm(this, id, {
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: silence?.periods ?? 1,
        comparisonOperator: silence
          ? cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD
          : cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: silence ? cloudwatch.TreatMissingData.BREACHING : cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(new actions.SnsAction(this.topic));
      created.addOkAction(new actions.SnsAction(this.topic));
      this.alarms.push(created);
    }
  }
}

/** One alarm: its construct id, what it tells the operator, the metric and the threshold it breaches at. */
interface AlarmSpec {
  id: string;
  description: string;
  metric: cloudwatch.IMetric;
  threshold: number;
  /** An alarm on silence: breached after this many periods under the threshold, a missing metric included. */
  silence?: { periods: number };
}

/** The stack's alarms, in one list: the API's, the stores', the sweep's, and the limits coming near. */
function alarmsOf(props: MonitoringProps, signals: Signals, region: string): AlarmSpec[] {
  return [...apiAlarms(props, signals), ...sweepAlarms(props, signals), ...limitAlarms(props, region)];
}

function apiAlarms(props: MonitoringProps, signals: Signals): AlarmSpec[] {
  const { apiFunction } = props;
  return [
    {
      id: 'ApiErrors',
      description: 'The API function failed (crashed or timed out)',
      metric: apiFunction.metricErrors({ period: FIVE_MINUTES }),
      threshold: 1,
    },
    {
      id: 'Api5xx',
      description: 'The API answered 5xx (from the function or the gateway) 3 times in 5 minutes',
      metric: signals.gateway5xx,
      threshold: 3,
    },
    {
      id: 'ApiThrottles',
      description: 'Lambda throttled the API function (concurrency quota)',
      metric: apiFunction.metricThrottles({ period: FIVE_MINUTES }),
      threshold: 1,
    },
    {
      id: 'GatewayThrottled',
      description: "The gateway's stage throttle refused requests (429)",
      metric: signals.gatewayThrottles,
      threshold: 1,
    },
    { id: 'TableThrottles', description: 'DynamoDB throttled requests', metric: signals.tableThrottles, threshold: 1 },
    { id: 'TableSystemErrors', description: 'DynamoDB answered system errors', metric: signals.tableSystemErrors, threshold: 1 },
    {
      id: 'SsmReadFailures',
      description: 'The API could not read its parameters from SSM (the key, the flood limits)',
      metric: signals.metric(METRIC.storeErrors, { dimensions: { Store: 'SSM' } }),
      threshold: 1,
    },
  ];
}

function sweepAlarms(props: MonitoringProps, signals: Signals): AlarmSpec[] {
  return [
    {
      id: 'SweepErrors',
      description: 'The sweep function failed',
      metric: props.sweepFunction.metricErrors({ period: FIVE_MINUTES }),
      threshold: 1,
    },
    {
      id: 'SweepFailures',
      description: 'The sweep could not remove images',
      metric: signals.metric(METRIC.sweepFailed, { service: 'sweep' }),
      threshold: 1,
    },
    {
      id: 'SweepBacklog',
      description: 'Records have been due for the sweep for over 15 minutes: it is not keeping up, or CDN purges are refused',
      metric: signals.metric(METRIC.sweepBacklogAge, { service: 'sweep', statistic: 'Maximum' }),
      threshold: SWEEP_BACKLOG_ALARM_SECONDS,
    },
    {
      id: 'SweepNotRun',
      description: `The sweep has not run for ${SWEEP_SILENT_PERIODS * 5} minutes: its schedule is off or the function cannot be invoked (expired images stay up)`,
      metric: props.sweepFunction.metricInvocations({ period: FIVE_MINUTES, statistic: 'Sum' }),
      threshold: 1,
      silence: { periods: SWEEP_SILENT_PERIODS },
    },
  ];
}

function limitAlarms(props: MonitoringProps, region: string): AlarmSpec[] {
  const timeoutMs = props.apiTimeout.toMilliseconds();
  const near = `${Math.round(NEAR_LIMIT * 100)}%`;
  return [
    {
      id: 'ApiNearTimeout',
      description: `An API invocation took over ${near} of its ${timeoutMs / 1000} s timeout`,
      metric: props.apiFunction.metricDuration({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      threshold: Math.round(timeoutMs * NEAR_LIMIT),
    },
    {
      id: 'ConcurrencyNearQuota',
      description: `The account ran ${near} of its Lambda concurrency quota (${props.accountConcurrency}, -c accountConcurrency) at once: past it, uploads are throttled`,
      metric: new cloudwatch.Metric({
        namespace: 'AWS/Lambda',
        metricName: 'ConcurrentExecutions',
        statistic: 'Maximum',
        period: FIVE_MINUTES,
      }),
      threshold: Math.max(1, Math.floor(props.accountConcurrency * NEAR_LIMIT)),
    },
    ...(props.firewallRate
      ? [
          {
            id: 'FirewallRateLimited',
            description: "The firewall's rate rule refused a viewer address (more requests in 5 minutes than firewallRateLimit)",
            metric: new cloudwatch.Metric({
              namespace: 'AWS/WAFV2',
              metricName: 'BlockedRequests',
              // WAF names its metrics by the web ACL's and the rule's metric names, not by the web ACL's own name
              dimensionsMap: { ...props.firewallRate, Region: region },
              statistic: 'Sum',
              period: FIVE_MINUTES,
            }),
            threshold: 1,
          },
        ]
      : []),
  ];
}
