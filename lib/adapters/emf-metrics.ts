import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Refusal } from '../fairness/share';
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
    const dimensions = { outcome: a.outcome, verdict: a.exhausted ? 'exhausted' : a.verdict };
    // A single metric is flushed by its first addMetric: one per metric, each with the dimensions.
    metrics.singleMetric().addDimensions(dimensions).addMetric('WebhookAttempts', MetricUnit.Count, 1);
    metrics.singleMetric().addDimensions(dimensions).addMetric('WebhookAttemptDuration', MetricUnit.Milliseconds, a.durationMs);
  };
}

/** Jobs a worker put back because a cap was full (lib/fairness/share.ts), by queue and by which cap. */
export function deferralMetric(metrics: Metrics, queue: string): (refusal: Refusal, count?: number) => void {
  return (refusal, count = 1) => {
    metrics.singleMetric().addDimensions({ queue, cap: refusal }).addMetric('Deferrals', MetricUnit.Count, count);
  };
}
