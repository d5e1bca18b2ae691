import { Duration, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { declaresDataKeys, FUNCTION_ACCESS, FUNCTION_NAMES, type FunctionName } from '../../lib/service/access';
import { RESERVED_CONCURRENCY } from '../../lib/service/api-settings';
import { FUNCTION_AREAS, type Area } from '../../lib/service/areas';
import { docsRendererBundleFiles } from '../../lib/service/docs-assets';
import { ENV } from '../../lib/service/env-names';
import { OUTBOX_STREAM_FILTERS, QUEUES, queueUrlEnvName, type QueueId } from '../../lib/service/resources';
import type { Route } from '../../lib/service/routes';
import { Alarms } from '../constructs/alarms';
import { DeclaredAccess } from '../constructs/declared-access';
import { ServiceFunction } from '../constructs/service-function';

/** Plain settings every stack of the service builds its functions with (no reference to a resource). */
export interface ServiceConfig {
  /** Repository root (function entries, the lock file). */
  readonly root: string;
  readonly serviceName: string;
  /** The root stack's name: the issuer keys' service tag, the usage-key prefix and plan names. */
  readonly stackName: string;
  readonly stageName: string;
  readonly indyNamespace: string;
  readonly limits: { readonly maxDidsPerWallet: number; readonly maxDidCreationsPerMinute: number };
  readonly mail: { readonly sender: string; readonly configurationSet?: string | undefined };
  readonly publicBaseUrl?: string | undefined;
  readonly taa?: { text: string; version: string; aml: Record<string, string>; amlVersion: string } | undefined;
}

/**
 * What a stack's functions and routes use of the service's shared resources: in the root stack the
 * resources themselves, in an area's nested stack their imports from its parameters.
 */
export interface ServiceRefs {
  readonly tableName: string;
  readonly table: dynamodb.ITable;
  /** The table with its stream: the relay's event source. */
  readonly tableWithStream: dynamodb.ITable;
  readonly macKeyArn: string;
  /** The KMS key of DIDComm data keys (read only by functions that declare `dataKeys`). */
  readonly didcommKeyArn: string;
  queue(id: QueueId): sqs.IQueue;
  /** A queue's URL alone (every function's environment names every queue). */
  queueUrl(id: QueueId): string;
  /** The relay's on-failure destination. */
  readonly relayFailures: sqs.IQueue;
  readonly api: apigw.IRestApi;
  readonly authorizer: apigw.IAuthorizer;
  /** The API resource at a route's path (the shared ones from the root, the area's own created here). */
  resourceAt(path: string): apigw.IResource;
}

/** Where each worker's code is; route groups are `functions/<group>/handler.ts`. */
export const WORKER_ENTRIES: Partial<Record<FunctionName, string>> = {
  'webhook-relay': 'functions/workers/webhook-relay.ts',
  'webhook-delivery': 'functions/workers/webhook-delivery.ts',
  'status-worker': 'functions/workers/status-lists.ts',
  'email-worker': 'functions/workers/email.ts',
  'didcomm-worker': 'functions/workers/didcomm-inbound.ts',
  'didcomm-outbound': 'functions/workers/didcomm-outbound.ts',
  'anoncreds-worker': 'functions/workers/anoncreds.ts',
  'credential-issuer': 'functions/workers/credential-issuer.ts',
};

const DESCRIPTIONS: Record<FunctionName, string> = {
  authorizer: 'API key / subwallet token authorizer',
  bootstrap: 'Issues (or rotates) the base super-admin key; invoked with IAM only',
  tenancy: 'Endpoint group: subwallets and API keys',
  webhooks: 'Endpoint group: webhook settings and deliveries',
  dids: 'Endpoint group: DIDs on KMS keys',
  taa: 'Endpoint group: the publication agreement (TAA)',
  oid4vci: 'Endpoint group: OID4VCI supported credentials, exchanges and offers',
  resolver: 'Public DID resolution',
  'oid4vci-issuer': 'Public OpenID4VCI issuer endpoints (metadata, token, nonce, credential, notification)',
  meta: 'Public API description',
  'webhook-relay': 'Relays new outbox items into webhook deliveries and jobs',
  'webhook-delivery': 'Delivers webhooks (one attempt per message), retries with backoff',
  'status-lists': 'Endpoint group: status list definitions, entries, revocation, publication',
  'status-lists-public': 'Public status lists (IETF Token Status List, W3C Bitstring Status List)',
  'status-worker': 'Re-publishes changed status lists; removes deleted definitions',
  email: 'Endpoint group: bulk credential offers by email (checked, then queued)',
  'email-worker': "Makes each recipient's offer and sends its mail through SES",
  oid4vp: 'Endpoint group: OID4VP presentation definitions, requests and presentations',
  'oid4vp-verifier': 'Public OpenID4VP verifier endpoints (request objects, direct_post responses)',
  didcomm: 'Endpoint group: DIDComm invitations, connections and basic messages',
  'didcomm-inbound': 'Public DIDComm v1 endpoint: stores and queues inbound envelopes',
  'didcomm-worker': 'Unpacks inbound DIDComm envelopes and runs the agent (DID Exchange, trust ping, basic messages)',
  'didcomm-outbound': 'Packs and posts DIDComm messages to peers (one attempt per message), retries with backoff',
  jsonld: 'Endpoint group: JSON-LD context files, and JSON-LD credential offers over DIDComm',
  'credential-issuer': 'Signs the JSON-LD credentials holders requested over DIDComm (KMS) and sends them',
  'jsonld-public': 'Public JSON-LD context files (GET /context)',
  anoncreds: 'Endpoint group: AnonCreds schemas and credential definitions',
  'anoncreds-public': 'Public AnonCreds objects (the did:web AnonCreds method)',
  'anoncreds-worker': "Makes credential definitions' CL keys, seals the private key, publishes the definition",
};

const TIMEOUTS: Partial<Record<FunctionName, Duration>> = {
  'webhook-relay': Duration.seconds(30),
  'webhook-delivery': Duration.seconds(30),
  'status-worker': Duration.seconds(60),
  'email-worker': Duration.seconds(60),
  'didcomm-worker': Duration.seconds(30),
  'didcomm-outbound': Duration.seconds(30),
  // Two 1,025-bit safe primes: seconds on one core, with a long tail (docs/anoncreds.md, "CPU costs").
  'anoncreds-worker': Duration.seconds(120),
  'credential-issuer': Duration.seconds(30),
  // A response may need an issuer's did.json, its metadata and JWKS, and status lists (3 s each at most), within the gateway's 29 s.
  'oid4vp-verifier': Duration.seconds(25),
};

/** The worker each queue feeds, with the consumer settings declared beside the queue (lib/service/resources.ts). */

/** Functions that read the publication agreement (shipped as a file: Lambda allows 4 KB of environment). */
const TAA_READERS: readonly FunctionName[] = ['dids', 'taa'];
const TAA_FILE = 'taa.json';
export const tenantPlanName = (stackName: string) => `${stackName}-tenants`;

/** CloudWatch alarms on metric math read at most this many metrics. */
const MAX_ALARM_METRICS = 10;

export function functionsOf(area: Area): FunctionName[] {
  return FUNCTION_NAMES.filter((n) => FUNCTION_AREAS[n] === area);
}

/**
 * Checks of the declarations the stacks are built from, before anything is built: a function no route,
 * trigger or operator calls would be deployed for nothing; a reserved concurrency must name a function.
 */
export function checkDeclarations(routes: readonly Route[]): void {
  const groups = new Set<string>(routes.map((r) => r.group));
  const idle = FUNCTION_NAMES.filter((n) => !groups.has(n) && !WORKER_ENTRIES[n] && n !== 'authorizer' && n !== 'bootstrap');
  if (idle.length > 0) throw new Error(`functions with no routes and no trigger: ${idle.join(', ')}`);
  for (const [name, count] of Object.entries(RESERVED_CONCURRENCY)) {
    if (!(FUNCTION_NAMES as readonly string[]).includes(name)) throw new Error(`RESERVED_CONCURRENCY names no function: ${name}`);
    if (!Number.isInteger(count) || count < 1) throw new Error(`RESERVED_CONCURRENCY of ${name} must be a positive integer`);
  }
}

/**
 * The functions of one area, each with its role built from its declaration, its triggers, and its
 * alarms: errors per function (an error names a code path); throttles per area, because without reserved
 * concurrency a function is throttled only when the account's concurrency is used up, which throttles
 * every function at once — one alarm says as much as one per function — and per function where its
 * concurrency is reserved, since there a throttle means that function's own bound was reached.
 */
export function addAreaFunctions(scope: Construct, area: Area, config: ServiceConfig, refs: ServiceRefs, alarms: Alarms): Partial<Record<FunctionName, ServiceFunction>> {
  const environment: Record<string, string> = {
    [ENV.tableName]: refs.tableName,
    [ENV.keyBackend]: 'kms',
    [ENV.macKmsKeyId]: refs.macKeyArn,
    [ENV.serviceName]: config.serviceName,
    [ENV.logLevel]: 'INFO',
    [ENV.issuerKeyTag]: config.stackName,
    [ENV.indyNamespace]: config.indyNamespace,
    [ENV.usageKeyPrefix]: config.stackName,
    [ENV.maxDidsPerWallet]: String(config.limits.maxDidsPerWallet),
    [ENV.maxDidCreationsPerMinute]: String(config.limits.maxDidCreationsPerMinute),
    ...Object.fromEntries(QUEUES.map((q) => [queueUrlEnvName(q.id), refs.queueUrl(q.id)])),
    [ENV.emailSender]: config.mail.sender,
    ...(config.mail.configurationSet ? { [ENV.sesConfigurationSet]: config.mail.configurationSet } : {}),
    ...(config.publicBaseUrl ? { [ENV.publicBaseUrl]: config.publicBaseUrl } : {}),
  };
  const fns: Partial<Record<FunctionName, ServiceFunction>> = {};
  for (const name of functionsOf(area)) {
    const taa = config.taa && TAA_READERS.includes(name);
    const f = new ServiceFunction(scope, `${name}-function`, {
      root: config.root,
      name,
      description: DESCRIPTIONS[name],
      ...(WORKER_ENTRIES[name] ? { entry: WORKER_ENTRIES[name] } : {}),
      ...(TIMEOUTS[name] ? { timeout: TIMEOUTS[name] } : {}),
      ...(RESERVED_CONCURRENCY[name] !== undefined ? { reservedConcurrency: RESERVED_CONCURRENCY[name] } : {}),
      environment: { ...environment, ...(taa ? { [ENV.taaFile]: TAA_FILE } : {}) },
      ...(taa ? { files: { [TAA_FILE]: JSON.stringify(config.taa) } } : {}),
      // The API reference's renderer ships beside the meta handler, not inside its bundle.
      ...(name === 'meta' ? { files: docsRendererBundleFiles() } : {}),
    });
    // By name: the plan is made after the API's deployment, which waits for every area.
    if (name === 'tenancy') f.fn.addEnvironment(ENV.usagePlanName, tenantPlanName(config.stackName));
    const dataKeys = declaresDataKeys(FUNCTION_ACCESS[name]);
    const access = new DeclaredAccess(f, 'Access', { fn: name, role: f.role, table: refs.table, macKeyArn: refs.macKeyArn, ...(dataKeys ? { didcommKeyArn: refs.didcommKeyArn } : {}), queue: (id) => refs.queue(id), issuerKeyTag: config.stackName, mail: config.mail });
    if (access.tenantRole) f.fn.addEnvironment(ENV.tenantRoleArn, access.tenantRole.roleArn);
    if (access.registryRole) f.fn.addEnvironment(ENV.registryRoleArn, access.registryRole.roleArn);
    if (dataKeys) f.fn.addEnvironment(ENV.didcommKmsKeyId, refs.didcommKeyArn);
    fns[name] = f;
    // The authorizer's refusals are Lambda errors by API Gateway's design: the root watches its own metric instead.
    if (name !== 'authorizer') alarms.add(`${name}-errors`, `${name} function errors`, f.fn.metricErrors({ period: Alarms.FIVE_MINUTES, statistic: 'Sum' }), 1);
    const reserved = RESERVED_CONCURRENCY[name];
    if (reserved !== undefined) {
      alarms.add(`${name}-throttles`, `${name} function throttled: its ${reserved} reserved instances were all busy`, f.fn.metricThrottles({ period: Alarms.FIVE_MINUTES, statistic: 'Sum' }), 1);
    }
  }

  const shared = Object.entries(fns).filter(([name]) => RESERVED_CONCURRENCY[name] === undefined);
  if (shared.length > MAX_ALARM_METRICS) throw new Error(`area ${area} has more than ${MAX_ALARM_METRICS} functions: its throttle alarm cannot read them all; split the area`);
  if (shared.length > 0) {
    const usingMetrics = Object.fromEntries(shared.map(([, f], i) => [`m${i}`, f!.fn.metricThrottles({ period: Alarms.FIVE_MINUTES, statistic: 'Sum' })]));
    alarms.add(
      `${area}-throttles`,
      `a function of area ${area} was throttled (${shared.map(([n]) => n).join(', ')}): the account's Lambda concurrency is used up`,
      new cloudwatch.MathExpression({ expression: `SUM([${Object.keys(usingMetrics).map((m) => `FILL(${m}, 0)`).join(', ')}])`, usingMetrics, period: Alarms.FIVE_MINUTES, label: `${area} throttles` }),
      1,
    );
  }

  // Events: table stream (outbox items only) -> relay -> queues -> workers.
  const relay = fns['webhook-relay'];
  if (relay) {
    relay.fn.addEventSource(
      new DynamoEventSource(refs.tableWithStream, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(1),
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        // No retry count: a failing record is retried until it is 24 h old (the stream's retention),
        // so an outage of SQS or DynamoDB delays events rather than parking them.
        maxRecordAge: Duration.hours(24),
        onFailure: new SqsDlq(refs.relayFailures),
        filters: OUTBOX_STREAM_FILTERS.map((f) => lambda.FilterCriteria.filter(f as never)),
      }),
    );
    Validations.of(relay).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      reason: "dynamodb:ListStreams (added by the stream event source) cannot be scoped to a resource; the read actions are on this table's stream only.",
    });
    alarms.add(
      'webhook-relay-iterator-age',
      'events wait more than 5 minutes in the table stream (the relay is failing or behind)',
      relay.fn.metric('IteratorAge', { period: Alarms.FIVE_MINUTES, statistic: 'Maximum' }),
      300_000,
    );
  }
  for (const q of QUEUES) {
    const worker = fns[q.worker];
    if (!worker) continue;
    worker.fn.addEventSource(
      new SqsEventSource(refs.queue(q.id), {
        batchSize: q.consumer.batchSize,
        maxConcurrency: q.consumer.maxConcurrency,
        reportBatchItemFailures: true,
        ...(q.consumer.maxBatchingWindowSeconds ? { maxBatchingWindow: Duration.seconds(q.consumer.maxBatchingWindowSeconds) } : {}),
      }),
    );
  }
  return fns;
}

/**
 * The API methods of an area's routes, each a Lambda proxy integration of its group's function. One
 * invoke permission per function, for any of its methods on this API's stage (a permission per method
 * would add one resource per route); test invocations from the console are not allowed.
 */
export function addAreaRoutes(scope: Construct, routes: readonly Route[], fns: Partial<Record<FunctionName, ServiceFunction>>, refs: ServiceRefs, config: ServiceConfig): void {
  const integrations = new Map<FunctionName, apigw.Integration>();
  const integrationOf = (group: FunctionName) => {
    let integration = integrations.get(group);
    if (!integration) {
      const f = fns[group];
      if (!f) throw new Error(`route group ${group} has no function in this area`);
      // The Lambda proxy integration LambdaIntegration makes, without its per-method permissions.
      integration = new apigw.AwsIntegration({ proxy: true, service: 'lambda', path: `2015-03-31/functions/${f.fn.functionArn}/invocations` });
      f.fn.addPermission('ApiInvoke', { principal: new iam.ServicePrincipal('apigateway.amazonaws.com'), sourceArn: refs.api.arnForExecuteApi('*', '/*', config.stageName) });
      integrations.set(group, integration);
    }
    return integration;
  };
  for (const route of routes) {
    const method = refs.resourceAt(route.path).addMethod(
      route.method,
      integrationOf(route.group),
      route.auth === 'public'
        ? { authorizationType: apigw.AuthorizationType.NONE, operationName: route.operationId }
        : { authorizationType: apigw.AuthorizationType.CUSTOM, authorizer: refs.authorizer, operationName: route.operationId, apiKeyRequired: true },
    );
    if (route.auth === 'public') {
      Validations.of(method).acknowledge({ id: 'AwsSolutions::AwsSolutions-APIG4', reason: 'Public protocol/metadata route: protected by the protocol itself or serves public data.' });
      Validations.of(method).acknowledge({ id: 'AwsSolutions::AwsSolutions-COG4', reason: 'Public route: no caller identity by design.' });
    } else {
      Validations.of(method).acknowledge({ id: 'AwsSolutions::AwsSolutions-COG4', reason: 'Callers are API consumers with API keys, authorized by the Lambda authorizer, not Cognito users.' });
    }
  }
}
