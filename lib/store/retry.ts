import { ConditionFailedError, WriteConflictError } from './port';

/**
 * Runs `attempt` again when a concurrent transaction on the same items won (DynamoDB cancels the
 * loser), after a short random pause that grows with each try; any other outcome is returned or thrown.
 */
export async function retryingConflicts<T>(attempt: () => Promise<T>, tries = 4): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof WriteConflictError) || i >= tries - 1) throw e;
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 20 * (i + 1)));
    }
  }
}

/**
 * A conditional write that lost to another writer: its condition no longer held, or DynamoDB cancelled
 * it against a concurrent transaction. The caller reads what the winner left.
 */
export function lostRace(err: unknown): err is ConditionFailedError | WriteConflictError {
  return err instanceof ConditionFailedError || err instanceof WriteConflictError;
}
