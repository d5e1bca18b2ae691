import { deferralMetric, serviceMetrics, webhookAttemptMetrics } from '../../lib/adapters/emf-metrics';
import { AUTHORIZER_METRICS } from '../../lib/service/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';

/** EMF lines Powertools writes to stdout (CloudWatch turns them into metrics; the alarms read those). */
function captured(run: () => void): Record<string, any>[] {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const log = console.log;
  process.stdout.write = ((chunk: string) => (lines.push(String(chunk)), true)) as never;
  console.log = (...args: unknown[]) => void lines.push(args.map(String).join(' '));
  try {
    run();
  } finally {
    process.stdout.write = write;
    console.log = log;
  }
  return lines.flatMap((l) => l.split('\n')).filter((l) => l.includes('_aws')).map((l) => JSON.parse(l));
}

test('a webhook attempt: its count and its duration, each by outcome and verdict, in the service namespace', () => {
  const records = captured(() => webhookAttemptMetrics(serviceMetrics('svc'))({ outcome: 'http_error', verdict: 'retry', exhausted: false, durationMs: 42 }));
  expect(records).toHaveLength(2);
  for (const [emf, name, unit, value] of [
    [records[0], 'WebhookAttempts', 'Count', 1],
    [records[1], 'WebhookAttemptDuration', 'Milliseconds', 42],
  ] as const) {
    expect(emf!._aws.CloudWatchMetrics[0]).toEqual({ Namespace: 'svc', Dimensions: [expect.arrayContaining(['service', 'outcome', 'verdict'])], Metrics: [{ Name: name, Unit: unit }] });
    expect(emf).toMatchObject({ service: 'svc', outcome: 'http_error', verdict: 'retry', [name]: value });
  }
  const [exhausted] = captured(() => webhookAttemptMetrics(serviceMetrics('svc'))({ outcome: 'timeout', verdict: 'retry', exhausted: true, durationMs: 1 }));
  expect(exhausted).toMatchObject({ verdict: 'exhausted' });
});

test('the authorizer failure metric is what the stack alarms on: namespace = service name, dimension service', () => {
  const [emf] = captured(() => serviceMetrics('svc').addMetric(AUTHORIZER_METRICS.failures, MetricUnit.Count, 1).publishStoredMetrics());
  expect(emf!._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'svc', Dimensions: [['service']], Metrics: [{ Name: 'AuthorizerFailures', Unit: 'Count' }] });
  expect(emf).toMatchObject({ service: 'svc', AuthorizerFailures: 1 });
});

test('jobs put back over a cap: counted by queue and by which cap was full', () => {
  const [emf] = captured(() => deferralMetric(serviceMetrics('svc'), 'email')('tenant', 7));
  expect(emf!._aws.CloudWatchMetrics[0]).toEqual({ Namespace: 'svc', Dimensions: [expect.arrayContaining(['service', 'queue', 'cap'])], Metrics: [{ Name: 'Deferrals', Unit: 'Count' }] });
  expect(emf).toMatchObject({ service: 'svc', queue: 'email', cap: 'tenant', Deferrals: 7 });
});
