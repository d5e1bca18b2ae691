import { deferralMetric, serviceMetrics } from '../../lib/adapters/emf-metrics';
import { FairShare } from '../../lib/fairness/share';
import type { Logger } from '@aws-lambda-powertools/logger';
import { queueDefinition, type QueueId } from '../../lib/service/resources';
import type { Deps } from './deps';

/** A queue worker's share of its queue (its declared fairness) and the metric of the jobs it defers. */
export function workerFairShare(deps: Deps, logger: Logger, queueId: QueueId) {
  const queue = queueDefinition(queueId);
  const share = new FairShare({
    store: deps.store,
    name: queue.id,
    fairness: queue.fairness,
    onReleaseError: (err) => logger.warn('in-flight place not given back; it frees when its lease ends', { error: err as Error }),
  });
  return { queue, share, deferred: deferralMetric(serviceMetrics(deps.config.serviceName), queue.id) };
}
