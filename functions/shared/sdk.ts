import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';

type Logger = NonNullable<DynamoDBClientConfig['logger']>;

/**
 * The SDK's logger middleware calls `logger?.info?.({ input: filter(input), output: filter(output) })`
 * after every request, and its default logger has a no-op `info`, so both filters walk the whole
 * request and response first (a BatchGetItem's items, a Query's page) for nothing: 1.8 % of the local
 * runtime's CPU per issued credential in a profile (docs/benchmarks.md, issue 25). Without `info`
 * and `error` the optional calls skip that work; our own logs record what failed.
 */
const QUIET_SDK_LOGGER = { trace() {}, debug() {}, warn() {} } as unknown as Logger;

/** Options every AWS SDK client of ours is made with (spread first, then the client's own). */
export const SDK_CLIENT_DEFAULTS = { logger: QUIET_SDK_LOGGER } as const;
