import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

export const LOCAL_ACCOUNT = '000000000000';

/** The Lambda context the local runtime hands a handler, with the deployed function's timeout. */
export function lambdaContext(functionName: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:${LOCAL_ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
