import { CfnOutput, Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { docsRendererBundleFiles } from '../../lib/meta/assets';
import { ENV } from '../../lib/service/env-names';
import { GATEWAY_ERRORS } from '../../lib/service/gateway-responses';
import { DLQ_RETENTION_DAYS, OUTBOX_STREAM_FILTER, QUEUES, TABLE, queueUrlEnvName } from '../../lib/service/resources';
import { ROUTE_GROUPS, ROUTES, type RouteGroup } from '../../lib/service/routes';
import { ServiceFunction } from '../constructs/service-function';

export interface ServiceStackProps extends StackProps {
  readonly root: string;
  readonly serviceName: string;
  /** Seconds an authorizer decision is cached per key (0 disables); a revoked key works at most this long. */
  readonly authorizerCacheTtlSeconds: number;
  readonly throttleRateLimit: number;
  readonly throttleBurstLimit: number;
  /** did:indy namespace of this deployment (README, "DIDs"). */
  readonly indyNamespace: string;
  /** Base URL for did:web identifiers when the API sits behind a custom domain; else from each request. */
  readonly publicBaseUrl?: string;
  /** The publication agreement (TAA); none configured means set-public-did needs no acceptance. */
  readonly taa?: { text: string; version: string; aml: Record<string, string>; amlVersion: string };
}

type FunctionName = RouteGroup | 'authorizer' | 'bootstrap' | 'webhook-relay' | 'webhook-delivery';

/** Table actions each function may use, and on what: nothing else is granted. */
const TABLE_ACCESS: Record<FunctionName, { actions: string[]; index: boolean; table: boolean }> = {
  tenancy: {
    actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'],
    table: true,
    index: true,
  },
  webhooks: { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'], table: true, index: false },
  dids: {
    actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'],
    table: true,
    index: false,
  },
  resolver: { actions: ['dynamodb:Query'], table: false, index: true },
  meta: { actions: [], table: false, index: false },
  authorizer: { actions: ['dynamodb:Query'], table: false, index: true },
  bootstrap: { actions: ['dynamodb:PutItem'], table: true, index: false },
  'webhook-relay': { actions: ['dynamodb:GetItem', 'dynamodb:PutItem'], table: true, index: false },
  'webhook-delivery': { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], table: true, index: false },
};

/** Functions that may send to the webhook queue (new deliveries, retries, chained delays). */
const WEBHOOK_SENDERS: readonly FunctionName[] = ['webhooks', 'webhook-relay', 'webhook-delivery'];
/** Functions that derive secrets with the KMS HMAC key (API-key MAC, tokens, webhook signing). */
const MAC_USERS: readonly FunctionName[] = ['authorizer', 'bootstrap', 'tenancy', 'webhooks', 'webhook-delivery'];
/** Functions that create issuer keys in KMS and read their public keys. */
const ISSUER_KEY_CREATORS: readonly FunctionName[] = ['dids'];

/** Acknowledges cdk-nag findings on a construct; every reason is the justification of record. */
function acknowledge(scope: Construct, findings: { id: string; reason: string }[]): void {
  for (const f of findings) Validations.of(scope).acknowledge(f);
}

export class ServiceStack extends Stack {
  readonly api: apigw.RestApi;
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);

    // Data: one table, lookups by opaque values through the sparse GSI1.
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE.ttlAttribute,
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      // The transactional outbox: the relay reads new event items from the stream.
      stream: dynamodb.StreamViewType.NEW_IMAGE,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: TABLE.gsi1.name,
      partitionKey: { name: TABLE.gsi1.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE.gsi1.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });

    // The master of the API-key HMAC and subwallet-token secrets: a KMS HMAC key that never leaves KMS.
    const macKey = new kms.Key(this, 'SecretsMacKey', {
      description: `${props.serviceName}: derives the API-key HMAC and subwallet-token secrets (GenerateMac)`,
      keySpec: kms.KeySpec.HMAC_256,
      keyUsage: kms.KeyUsage.GENERATE_VERIFY_MAC,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // Work queues, each with a DLQ.
    const queues = new Map<string, sqs.Queue>();
    for (const q of QUEUES) {
      const dlq = new sqs.Queue(this, `${q.id}-dlq`, {
        retentionPeriod: Duration.days(DLQ_RETENTION_DAYS),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      const queue = new sqs.Queue(this, `${q.id}-queue`, {
        visibilityTimeout: Duration.seconds(q.visibilityTimeoutSeconds),
        retentionPeriod: Duration.days(q.retentionDays),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: dlq, maxReceiveCount: q.maxReceiveCount },
      });
      queues.set(q.id, queue);
    }
    const webhookQueue = queues.get('webhook')!;
    // Stream batches the relay could not handle after its retries (metadata to replay them by hand).
    const relayFailures = new sqs.Queue(this, 'webhook-relay-failures', {
      retentionPeriod: Duration.days(DLQ_RETENTION_DAYS),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    // Anything parked in a dead-letter store needs a human: alarm on the first message.
    for (const [name, dead] of [...[...queues.keys()].map((id) => [`${id}-dlq`, queues.get(id)!.deadLetterQueue!.queue] as const), ['webhook-relay-failures', relayFailures] as const]) {
      new cloudwatch.Alarm(this, `${name}-alarm`, {
        alarmDescription: `${props.serviceName}: messages waiting in ${name}`,
        metric: dead.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    }
    acknowledge(relayFailures, [
      { id: 'AwsSolutions::AwsSolutions-SQS3', reason: "This queue is the relay's on-failure destination, itself a dead-letter store." },
    ]);

    const environment = {
      [ENV.tableName]: this.table.tableName,
      [ENV.keyBackend]: 'kms',
      [ENV.macKmsKeyId]: macKey.keyArn,
      [ENV.serviceName]: props.serviceName,
      [ENV.logLevel]: 'INFO',
      [queueUrlEnvName('webhook')]: webhookQueue.queueUrl,
      [ENV.issuerKeyTag]: this.stackName,
      [ENV.indyNamespace]: props.indyNamespace,
      ...(props.publicBaseUrl ? { [ENV.publicBaseUrl]: props.publicBaseUrl } : {}),
    };
    const issuerKeyArns = this.formatArn({ service: 'kms', resource: 'key', resourceName: '*' });

    // The agreement's text can be long, and Lambda allows 4 KB of environment in all: it ships as a
    // file with the one function that reads it.
    const TAA_FILE = 'taa.json';
    const taaFor = (name: FunctionName) =>
      props.taa && name === 'dids' ? { environment: { ...environment, [ENV.taaFile]: TAA_FILE }, files: { [TAA_FILE]: JSON.stringify(props.taa) } } : { environment };

    const makeFunction = (name: FunctionName, description: string, extra: { entry?: string; timeout?: Duration } = {}) => {
      const f = new ServiceFunction(this, `${name}-function`, { root: props.root, name, description, ...taaFor(name), ...(name === 'meta' ? { files: docsRendererBundleFiles() } : {}), ...extra });
      const access = TABLE_ACCESS[name];
      const resources = [
        ...(access.table ? [this.table.tableArn] : []),
        ...(access.index ? [`${this.table.tableArn}/index/${TABLE.gsi1.name}`] : []),
      ];
      if (access.actions.length) f.role.addToPolicy(new iam.PolicyStatement({ actions: access.actions, resources }));
      if (MAC_USERS.includes(name)) macKey.grant(f.role, 'kms:GenerateMac');
      if (WEBHOOK_SENDERS.includes(name)) webhookQueue.grantSendMessages(f.role);
      if (ISSUER_KEY_CREATORS.includes(name)) {
        // Issuer keys are created at run time, one per DID: IAM holds them by tag, not by ARN.
        f.role.addToPolicy(
          new iam.PolicyStatement({
            actions: ['kms:CreateKey'],
            resources: ['*'],
            conditions: {
              StringEquals: { 'aws:RequestTag/service': this.stackName, 'kms:KeyUsage': 'SIGN_VERIFY' },
              'ForAllValues:StringEquals': { 'aws:TagKeys': ['service', 'wallet_id'] },
              'ForAnyValue:StringEquals': { 'kms:KeySpec': ['ECC_NIST_EDWARDS25519', 'ECC_NIST_P256'] },
            },
          }),
        );
        f.role.addToPolicy(
          new iam.PolicyStatement({
            // Needed for CreateKey's Tags. Only keys without a service tag (the key being created) may
            // be tagged, and only with our two tag keys: an existing key of this stack cannot be
            // re-tagged to another wallet, and no other key's tags can be changed.
            actions: ['kms:TagResource'],
            resources: [issuerKeyArns],
            conditions: {
              StringEquals: { 'aws:RequestTag/service': this.stackName },
              'ForAllValues:StringEquals': { 'aws:TagKeys': ['service', 'wallet_id'] },
              Null: { 'aws:ResourceTag/service': 'true' },
            },
          }),
        );
        f.role.addToPolicy(
          new iam.PolicyStatement({
            actions: ['kms:GetPublicKey', 'kms:Sign'],
            resources: [issuerKeyArns],
            conditions: { StringEquals: { 'aws:ResourceTag/service': this.stackName } },
          }),
        );
        acknowledge(f, [
          { id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]', reason: 'kms:CreateKey has no resource to scope; it is conditioned on the service tag, key usage and key specs.' },
          {
            id: `AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:<AWS::Region>:<AWS::AccountId>:key/*]`,
            reason: "Issuer keys are created at run time; access is limited by the aws:ResourceTag/service condition to this stack's keys.",
          },
        ]);
      }
      return f;
    };

    const authorizerFn = makeFunction('authorizer', 'API key / subwallet token authorizer');
    const groupFns = new Map(ROUTE_GROUPS.map((g) => [g, makeFunction(g, `Endpoint group ${g}`)] as const));
    const bootstrapFn = makeFunction('bootstrap', 'Issues (or rotates) the base super-admin key; invoked with IAM only');

    // Events: table stream (outbox items only) -> relay -> webhook queue -> delivery worker.
    const relayFn = makeFunction('webhook-relay', 'Relays new outbox events into per-target webhook deliveries', {
      entry: 'functions/workers/webhook-relay.ts',
      timeout: Duration.seconds(30),
    });
    relayFn.fn.addEventSource(
      new DynamoEventSource(this.table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(1),
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        // No retry count: a failing record is retried until it is 24 h old (the stream's retention),
        // so an outage of SQS or DynamoDB delays events rather than parking them.
        maxRecordAge: Duration.hours(24),
        onFailure: new SqsDlq(relayFailures),
        filters: [lambda.FilterCriteria.filter(OUTBOX_STREAM_FILTER as never)],
      }),
    );
    acknowledge(relayFn, [
      {
        id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
        reason: 'dynamodb:ListStreams (added by the stream event source) cannot be scoped to a resource; the read actions are on this table\'s stream only.',
      },
    ]);
    const deliveryFn = makeFunction('webhook-delivery', 'Delivers webhooks (one attempt per message), retries with backoff', {
      entry: 'functions/workers/webhook-delivery.ts',
      timeout: Duration.seconds(30),
    });
    deliveryFn.fn.addEventSource(
      new SqsEventSource(webhookQueue, { batchSize: 10, maxBatchingWindow: Duration.seconds(1), reportBatchItemFailures: true, maxConcurrency: 20 }),
    );

    // API: REST API (see README "Why a REST API"), one Lambda integration per endpoint group.
    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', { retention: logs.RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY });
    this.api = new apigw.RestApi(this, 'Api', {
      restApiName: props.serviceName,
      description: 'Credential issuance and verification service',
      endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: 'prod',
        throttlingRateLimit: props.throttleRateLimit,
        throttlingBurstLimit: props.throttleBurstLimit,
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        metricsEnabled: true,
        accessLogDestination: new apigw.LogGroupLogDestination(accessLogs),
        accessLogFormat: apigw.AccessLogFormat.jsonWithStandardFields(),
      },
    });

    for (const [type, e] of Object.entries(GATEWAY_ERRORS)) {
      this.api.addGatewayResponse(`gw-${type}`, {
        type: apigw.ResponseType.of(type),
        statusCode: String(e.status),
        templates: { 'application/json': JSON.stringify({ error: e.error, code: e.code }) },
      });
    }

    const authorizer = new apigw.TokenAuthorizer(this, 'ApiKeyAuthorizer', {
      handler: authorizerFn.fn,
      identitySource: apigw.IdentitySource.header('x-api-key'),
      resultsCacheTtl: Duration.seconds(props.authorizerCacheTtlSeconds),
      // Refuses obvious junk before invoking the function; the function checks the rest.
      validationRegex: '^[!-~]{32,4096}$',
    });

    const integrations = new Map([...groupFns].map(([g, f]) => [g, new apigw.LambdaIntegration(f.fn, { allowTestInvoke: false })]));
    for (const route of ROUTES) {
      const resource = this.api.root.resourceForPath(route.path);
      const method = resource.addMethod(
        route.method,
        integrations.get(route.group)!,
        route.auth === 'public'
          ? { authorizationType: apigw.AuthorizationType.NONE, operationName: route.operationId }
          : { authorizationType: apigw.AuthorizationType.CUSTOM, authorizer, operationName: route.operationId },
      );
      if (route.auth === 'public') {
        acknowledge(method, [
          { id: 'AwsSolutions::AwsSolutions-APIG4', reason: 'Public protocol/metadata route: protected by the protocol itself or serves public data.' },
          { id: 'AwsSolutions::AwsSolutions-COG4', reason: 'Public route: no caller identity by design.' },
        ]);
      } else {
        acknowledge(method, [
          { id: 'AwsSolutions::AwsSolutions-COG4', reason: 'Callers are API consumers with API keys, authorized by the Lambda authorizer, not Cognito users.' },
        ]);
      }
    }

    acknowledge(this.api.node.findChild('CloudWatchRole'), [
      {
        id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason: "API Gateway's account-level logging role: AWS's own policy made for exactly this, and needed for stage error logs (APIG6).",
      },
    ]);
    acknowledge(this.api, [
      { id: 'AwsSolutions::AwsSolutions-APIG2', reason: 'Requests are validated in the functions against the same schemas that generate /openapi.json, so errors keep the service shape.' },
      { id: 'AwsSolutions::AwsSolutions-APIG3', reason: 'WAF is an account-level choice (cost, rules); attach a web ACL to the stage where the platform wants one (README).' },
    ]);

    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Base URL of the API' });
    new CfnOutput(this, 'BaseKeyCommand', {
      description: 'Run once after the first deploy to obtain the base (super-admin) key',
      value: `aws lambda invoke --function-name ${bootstrapFn.fn.functionName} --cli-binary-format raw-in-base64-out --payload '{}' /dev/stdout`,
    });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
  }
}
