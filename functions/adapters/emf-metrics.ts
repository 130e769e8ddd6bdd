import { MetricUnit as PowertoolsUnit, Metrics as PowertoolsMetrics } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, type MetricUnit, type Metrics } from '../core/metrics';

const UNITS: Record<MetricUnit, (typeof PowertoolsUnit)[keyof typeof PowertoolsUnit]> = {
  Count: PowertoolsUnit.Count,
  Milliseconds: PowertoolsUnit.Milliseconds,
  Bytes: PowertoolsUnit.Bytes,
  Seconds: PowertoolsUnit.Seconds,
};

/**
 * Metrics in CloudWatch's embedded metric format through Powertools: log lines that CloudWatch turns into metrics,
 * no API calls. Values without a dimension are buffered and written in one line per invocation (`flush`); a value
 * with a dimension is written at once, in a line of its own. `POWERTOOLS_METRICS_DISABLED=true` writes nothing.
 */
export class EmfMetrics implements Metrics {
  private readonly metrics: PowertoolsMetrics;
  private buffered = false;

  /** In the namespace the stack names in the function's `POWERTOOLS_METRICS_NAMESPACE` (its own name), or `ImageUpload`. */
  constructor(serviceName: string, env: Readonly<Record<string, string | undefined>>) {
    this.metrics = new PowertoolsMetrics({
      namespace: env['POWERTOOLS_METRICS_NAMESPACE'] || METRICS_NAMESPACE,
      serviceName,
    });
  }

  add(name: string, unit: MetricUnit, value: number, dimension?: { name: string; value: string }): void {
    if (dimension) {
      const single = this.metrics.singleMetric();
      single.addDimension(dimension.name, dimension.value);
      single.addMetric(name, UNITS[unit], value);
      return;
    }
    this.metrics.addMetric(name, UNITS[unit], value);
    this.buffered = true;
  }

  /** Writes the buffered values, at the end of an invocation. */
  flush(): void {
    if (!this.buffered) return;
    this.buffered = false;
    this.metrics.publishStoredMetrics();
  }
}
