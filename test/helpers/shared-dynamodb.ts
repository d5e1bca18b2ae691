// One DynamoDB Local for the whole integration run (Jest's globalSetup of the integration project):
// each runtime a test starts makes its own table in it (infra/local/runtime.ts `sharedDynamoDb`)
// instead of starting a JVM of its own. Measured: a JVM's start costs ~7 s of CPU, and a fresh one
// spends its first hundreds of requests compiling (~16 ms of CPU each, against ~1 ms warm).
import { startDynamoDbLocal, type Emulator } from '../../infra/local/emulators';

/** The variable that hands the endpoint to the test workers (they inherit the environment). */
export const SHARED_DYNAMODB_ENV = 'TEST_SHARED_DYNAMODB_ENDPOINT';

const holder = globalThis as { sharedDynamoDb?: Emulator };

export async function setup(): Promise<void> {
  if (process.env[SHARED_DYNAMODB_ENV]) return; // given from outside (e.g. a developer's running one)
  holder.sharedDynamoDb = await startDynamoDbLocal(null);
  process.env[SHARED_DYNAMODB_ENV] = holder.sharedDynamoDb.endpoint;
}

export async function teardown(): Promise<void> {
  await holder.sharedDynamoDb?.stop();
}
