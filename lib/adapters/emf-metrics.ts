import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { AttemptReport } from '../webhooks/dispatcher';

/**
 * CloudWatch metrics as embedded metric format (EMF) log lines: no API call, no extra IAM, and the
 * alarms in the stack read them (namespace = the service name, dimension `service`).
 */
export function serviceMetrics(serviceName: string): Metrics {
  return new Metrics({ namespace: serviceName, serviceName });
}

/** One metric per webhook attempt, by outcome and verdict; the attempt's duration beside it. */
export function webhookAttemptMetrics(metrics: Metrics): (a: AttemptReport) => void {
  return (a) => {
    const single = metrics.singleMetric();
    single.addDimensions({ outcome: a.outcome, verdict: a.exhausted ? 'exhausted' : a.verdict });
    single.addMetric('WebhookAttempts', MetricUnit.Count, 1);
    single.addMetric('WebhookAttemptDuration', MetricUnit.Milliseconds, a.durationMs);
    single.publishStoredMetrics();
  };
}
