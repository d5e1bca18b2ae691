import { Annotations, CfnOutput, Duration, RemovalPolicy, Size, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { FUNCTION_NAMES, type FunctionName } from '../../lib/service/access';
import { routeThrottle, type ThrottleLimits } from '../../lib/service/api-settings';
import { docsRendererBundleFiles } from '../../lib/service/docs-assets';
import { ENV } from '../../lib/service/env-names';
import { AUTHORIZER_METRICS } from '../../lib/service/metrics';
import { GATEWAY_ERRORS } from '../../lib/service/gateway-responses';
import { DLQ_RETENTION_DAYS, OUTBOX_STREAM_FILTERS, QUEUES, TABLE, queueUrlEnvName, type QueueId } from '../../lib/service/resources';
import { ROUTE_GROUPS, ROUTES } from '../../lib/service/routes';
import { platformUsageKey } from '../../lib/service/usage-keys';
import { Alarms } from '../constructs/alarms';
import { DeclaredAccess } from '../constructs/declared-access';
import { ServiceFunction } from '../constructs/service-function';

export interface ServiceStackProps extends StackProps {
  readonly root: string;
  readonly serviceName: string;
  /** Seconds an authorizer decision is cached per key (0 disables); a revoked key works at most this long. */
  readonly authorizerCacheTtlSeconds: number;
  readonly throttles: {
    /** The stage's default method limit: each method on its own, every caller together. */
    readonly stage: ThrottleLimits;
    /** Each wallet (usage plan "tenants"). */
    readonly tenant: ThrottleLimits;
    /** The base key (usage plan "platform"). */
    readonly platform: ThrottleLimits;
    /** Each public route, all anonymous callers together. */
    readonly publicRoute: ThrottleLimits;
    /** Each public protocol route (OID4VCI), all holder wallets together. */
    readonly protocolRoute: ThrottleLimits;
  };
  readonly limits: { readonly maxDidsPerWallet: number; readonly maxDidCreationsPerMinute: number };
  /** did:indy namespace of this deployment (README, "DIDs"). */
  readonly indyNamespace: string;
  /** Base URL for did:web identifiers when the API sits behind a custom domain; else from each request. */
  readonly publicBaseUrl?: string;
  /**
   * A custom domain mapped at its root (empty base path), with its ACM certificate (same region): the
   * only way the OpenID4VCI 1.0 well-known locations (`https://<host>/.well-known/…/<path>`) reach the
   * API, since an execute-api URL starts every path with the stage. Sets `publicBaseUrl` when that is not given.
   */
  readonly customDomain?: { readonly domainName: string; readonly certificateArn: string };
  /** The publication agreement (TAA); none configured means set-public-did needs no acceptance. */
  readonly taa?: { text: string; version: string; aml: Record<string, string>; amlVersion: string };
  /** Who receives the alarms. */
  readonly alarmEmail?: string;
  /** Bulk email: the sender address (an SES-verified identity) and an optional SES configuration set. */
  readonly email?: { readonly sender: string; readonly configurationSet?: string };
}

/** Where each function's code is; groups are `functions/<group>/handler.ts`. */
const WORKER_ENTRIES: Partial<Record<FunctionName, string>> = {
  'webhook-relay': 'functions/workers/webhook-relay.ts',
  'webhook-delivery': 'functions/workers/webhook-delivery.ts',
  'status-worker': 'functions/workers/status-lists.ts',
  'email-worker': 'functions/workers/email.ts',
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
  'email-worker': 'Makes each recipient\'s offer and sends its mail through SES',
  oid4vp: 'Endpoint group: OID4VP presentation definitions, requests and presentations',
  'oid4vp-verifier': 'Public OpenID4VP verifier endpoints (request objects, direct_post responses)',
};

/** Functions that read the publication agreement (shipped as a file: Lambda allows 4 KB of environment). */
const TAA_READERS: readonly FunctionName[] = ['dids', 'taa'];
const TAA_FILE = 'taa.json';
const TENANT_PLAN_NAME = (stackName: string) => `${stackName}-tenants`;

export class ServiceStack extends Stack {
  readonly api: apigw.RestApi;
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    const { throttles } = props;

    // Data: one table; lookups by opaque values through sparse indexes, each read by its own roles.
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE.ttlAttribute,
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      // The transactional outbox: the relay reads new outbox items from the stream.
      stream: dynamodb.StreamViewType.NEW_IMAGE,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: TABLE.gsi1.name,
      partitionKey: { name: TABLE.gsi1.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE.gsi1.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: TABLE.publicDids.name,
      partitionKey: { name: TABLE.publicDids.partitionKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.INCLUDE,
      nonKeyAttributes: [...TABLE.publicDids.projection],
    });

    // The master of the API-key HMAC and subwallet-token secrets: a KMS HMAC key that never leaves KMS.
    const macKey = new kms.Key(this, 'SecretsMacKey', {
      description: `${props.serviceName}: derives the API-key HMAC and subwallet-token secrets (GenerateMac)`,
      keySpec: kms.KeySpec.HMAC_256,
      keyUsage: kms.KeyUsage.GENERATE_VERIFY_MAC,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const alarms = new Alarms(this, 'Alarms', { serviceName: props.serviceName, ...(props.alarmEmail ? { email: props.alarmEmail } : {}) });
    if (!props.alarmEmail) Annotations.of(alarms).addWarningV2('alarm-email', 'No alarmEmail context: alarms publish to a topic nobody subscribes to');

    // Work queues, each with a DLQ; anything parked in a dead-letter store needs a human.
    const queues = {} as Record<QueueId, sqs.Queue>;
    for (const q of QUEUES) {
      const dlq = new sqs.Queue(this, `${q.id}-dlq`, { retentionPeriod: Duration.days(DLQ_RETENTION_DAYS), encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true });
      queues[q.id] = new sqs.Queue(this, `${q.id}-queue`, {
        visibilityTimeout: Duration.seconds(q.visibilityTimeoutSeconds),
        retentionPeriod: Duration.days(q.retentionDays),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: dlq, maxReceiveCount: q.maxReceiveCount },
      });
    }
    // Stream batches the relay could not handle after its retries (metadata to replay them by hand).
    const relayFailures = new sqs.Queue(this, 'webhook-relay-failures', { retentionPeriod: Duration.days(DLQ_RETENTION_DAYS), encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true });
    Validations.of(relayFailures).acknowledge({ id: 'AwsSolutions::AwsSolutions-SQS3', reason: "This queue is the relay's on-failure destination, itself a dead-letter store." });
    const deadLetterStores = [...QUEUES.map((q) => [`${q.id}-dlq`, queues[q.id].deadLetterQueue!.queue] as const), ['webhook-relay-failures', relayFailures] as const];
    for (const [name, dead] of deadLetterStores) {
      alarms.add(`${name}-alarm`, `messages waiting in ${name}`, dead.metricApproximateNumberOfMessagesVisible({ period: Alarms.FIVE_MINUTES, statistic: 'Maximum' }), 1);
    }

    // API: REST API (see README "Why a REST API"), one Lambda integration per endpoint group.
    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', { retention: logs.RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY });
    const publicMethodOptions = Object.fromEntries(
      ROUTES.flatMap((r) => {
        const limits = routeThrottle(r, throttles);
        return limits ? [[`${r.path}/${r.method}`, { throttlingRateLimit: limits.rateLimit, throttlingBurstLimit: limits.burstLimit }]] : [];
      }),
    );
    if (Math.max(throttles.publicRoute.rateLimit, throttles.protocolRoute.rateLimit) >= throttles.stage.rateLimit) {
      Annotations.of(this).addWarningV2('public-throttle', 'a public route may take as much as an authenticated method: anonymous traffic is not held below tenants');
    }
    this.api = new apigw.RestApi(this, 'Api', {
      restApiName: props.serviceName,
      description: 'Credential issuance and verification service',
      endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
      // gzip for clients that accept it (the status-list drafts ask for it; lists and metadata compress well).
      minCompressionSize: Size.kibibytes(1),
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      // Per-tenant throttling: the authorizer names the caller's usage-plan key.
      apiKeySourceType: apigw.ApiKeySourceType.AUTHORIZER,
      deployOptions: {
        stageName: 'prod',
        throttlingRateLimit: throttles.stage.rateLimit,
        throttlingBurstLimit: throttles.stage.burstLimit,
        methodOptions: publicMethodOptions,
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        metricsEnabled: true,
        tracingEnabled: true,
        accessLogDestination: new apigw.LogGroupLogDestination(accessLogs),
        // The standard fields plus what joins a request to its authorizer run and its function's logs.
        accessLogFormat: apigw.AccessLogFormat.custom(
          JSON.stringify({
            requestId: apigw.AccessLogField.contextRequestId(),
            extendedRequestId: apigw.AccessLogField.contextExtendedRequestId(),
            ip: apigw.AccessLogField.contextIdentitySourceIp(),
            requestTime: apigw.AccessLogField.contextRequestTime(),
            httpMethod: apigw.AccessLogField.contextHttpMethod(),
            resourcePath: apigw.AccessLogField.contextResourcePath(),
            status: apigw.AccessLogField.contextStatus(),
            responseLength: apigw.AccessLogField.contextResponseLength(),
            responseLatency: apigw.AccessLogField.contextResponseLatency(),
            errorType: apigw.AccessLogField.contextErrorResponseType(),
            authorizerRequestId: apigw.AccessLogField.contextAuthorizerRequestId(),
            authorizerStatus: apigw.AccessLogField.contextAuthorizerIntegrationStatus(),
            authorizerError: apigw.AccessLogField.contextAuthorizerError(),
            principalId: apigw.AccessLogField.contextAuthorizerPrincipalId(),
            integrationRequestId: apigw.AccessLogField.contextAwsEndpointRequestId(),
            integrationError: apigw.AccessLogField.contextIntegrationErrorMessage(),
            integrationStatus: apigw.AccessLogField.contextIntegrationStatus(),
          }),
        ),
      },
    });

    // Usage plans: "tenants" holds one key per wallet (added at subwallet creation), "platform" the base key's.
    const stage = { api: this.api, stage: this.api.deploymentStage };
    const tenantPlan = this.api.addUsagePlan('TenantsPlan', {
      name: TENANT_PLAN_NAME(this.stackName),
      description: 'Each wallet: all its API keys and tokens share one bucket',
      throttle: { rateLimit: throttles.tenant.rateLimit, burstLimit: throttles.tenant.burstLimit },
      apiStages: [stage],
    });
    const platformPlan = this.api.addUsagePlan('PlatformPlan', {
      name: `${this.stackName}-platform`,
      description: 'The base (super-admin) key',
      throttle: { rateLimit: throttles.platform.rateLimit, burstLimit: throttles.platform.burstLimit },
      apiStages: [stage],
    });
    platformPlan.addApiKey(new apigw.ApiKey(this, 'PlatformUsageKey', { value: platformUsageKey(this.stackName), description: 'Throttling bucket of the base key (identifies, grants nothing)' }));
    const mailFrom = props.email ?? { sender: 'credentials@example.invalid' };
    if (!props.email) Annotations.of(this).addWarningV2('email-sender', 'No emailSender context: bulk email cannot be sent (set -c emailSender=<an SES-verified address>)');
    const common = {
      [ENV.tableName]: this.table.tableName,
      [ENV.keyBackend]: 'kms',
      [ENV.macKmsKeyId]: macKey.keyArn,
      [ENV.serviceName]: props.serviceName,
      [ENV.logLevel]: 'INFO',
      [ENV.issuerKeyTag]: this.stackName,
      [ENV.indyNamespace]: props.indyNamespace,
      [ENV.usageKeyPrefix]: this.stackName,
      [ENV.maxDidsPerWallet]: String(props.limits.maxDidsPerWallet),
      [ENV.maxDidCreationsPerMinute]: String(props.limits.maxDidCreationsPerMinute),
      [queueUrlEnvName('webhook')]: queues.webhook.queueUrl,
      [queueUrlEnvName('status')]: queues.status.queueUrl,
      [queueUrlEnvName('email')]: queues.email.queueUrl,
      [ENV.emailSender]: mailFrom.sender,
      ...(mailFrom.configurationSet ? { [ENV.sesConfigurationSet]: mailFrom.configurationSet } : {}),
      ...(props.publicBaseUrl ? { [ENV.publicBaseUrl]: props.publicBaseUrl } : {}),
    };

    // One function per group and worker; each role built from its declaration (lib/service/access.ts).
    const fns = {} as Record<FunctionName, ServiceFunction>;
    for (const name of FUNCTION_NAMES) {
      const taa = props.taa && TAA_READERS.includes(name);
      const f = new ServiceFunction(this, `${name}-function`, {
        root: props.root,
        name,
        description: DESCRIPTIONS[name],
        ...(WORKER_ENTRIES[name] ? { entry: WORKER_ENTRIES[name] } : {}),
        ...(name.startsWith('webhook-') ? { timeout: Duration.seconds(30) } : {}),
        ...(name === 'status-worker' || name === 'email-worker' ? { timeout: Duration.seconds(60) } : {}),
        // A response may need an issuer's did.json, its metadata and JWKS, and status lists (3 s each at most), within the gateway's 29 s.
        ...(name === 'oid4vp-verifier' ? { timeout: Duration.seconds(25) } : {}),
        environment: { ...common, ...(taa ? { [ENV.taaFile]: TAA_FILE } : {}) },
        ...(taa ? { files: { [TAA_FILE]: JSON.stringify(props.taa) } } : {}),
        // The API reference's renderer ships beside the meta handler, not inside its bundle.
        ...(name === 'meta' ? { files: docsRendererBundleFiles() } : {}),
      });
      // By name: the plan's id would make this function depend on the plan, which depends on it.
      if (name === 'tenancy') f.fn.addEnvironment(ENV.usagePlanName, TENANT_PLAN_NAME(this.stackName));
      const access = new DeclaredAccess(f, 'Access', { fn: name, role: f.role, table: this.table, macKey, queues, issuerKeyTag: this.stackName, tenantUsagePlanId: tenantPlan.usagePlanId, mail: mailFrom });
      if (access.tenantRole) f.fn.addEnvironment(ENV.tenantRoleArn, access.tenantRole.roleArn);
      fns[name] = f;
      if (name !== 'authorizer') {
        // The authorizer's refusals are Lambda errors by API Gateway's design: it has its own metric below.
        alarms.add(`${name}-errors`, `${name} function errors`, f.fn.metricErrors({ period: Alarms.FIVE_MINUTES, statistic: 'Sum' }), 1);
      }
      alarms.add(`${name}-throttles`, `${name} function throttled`, f.fn.metricThrottles({ period: Alarms.FIVE_MINUTES, statistic: 'Sum' }), 1);
    }

    // Events: table stream (outbox items only) -> relay -> webhook queue -> delivery worker.
    fns['webhook-relay'].fn.addEventSource(
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
        filters: OUTBOX_STREAM_FILTERS.map((f) => lambda.FilterCriteria.filter(f as never)),
      }),
    );
    Validations.of(fns['webhook-relay']).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      reason: "dynamodb:ListStreams (added by the stream event source) cannot be scoped to a resource; the read actions are on this table's stream only.",
    });
    alarms.add(
      'webhook-relay-iterator-age',
      'events wait more than 5 minutes in the table stream (the relay is failing or behind)',
      fns['webhook-relay'].fn.metric('IteratorAge', { period: Alarms.FIVE_MINUTES, statistic: 'Maximum' }),
      300_000,
    );
    // Queue -> worker, with the consumer settings declared beside each queue (lib/service/resources.ts).
    const QUEUE_WORKERS: Record<QueueId, FunctionName> = { webhook: 'webhook-delivery', status: 'status-worker', email: 'email-worker' };
    for (const q of QUEUES) {
      fns[QUEUE_WORKERS[q.id]].fn.addEventSource(
        new SqsEventSource(queues[q.id], {
          batchSize: q.consumer.batchSize,
          maxConcurrency: q.consumer.maxConcurrency,
          reportBatchItemFailures: true,
          ...(q.consumer.maxBatchingWindowSeconds ? { maxBatchingWindow: Duration.seconds(q.consumer.maxBatchingWindowSeconds) } : {}),
        }),
      );
    }

    // Bodies in the service's shape; a status only where we change API Gateway's on purpose.
    for (const [type, e] of Object.entries(GATEWAY_ERRORS)) {
      this.api.addGatewayResponse(`gw-${type}`, {
        type: apigw.ResponseType.of(type),
        ...('status' in e ? { statusCode: String(e.status) } : {}),
        templates: { 'application/json': JSON.stringify({ error: e.error, code: e.code }) },
      });
    }

    const authorizer = new apigw.TokenAuthorizer(this, 'ApiKeyAuthorizer', {
      handler: fns.authorizer.fn,
      identitySource: apigw.IdentitySource.header('x-api-key'),
      resultsCacheTtl: Duration.seconds(props.authorizerCacheTtlSeconds),
      // Refuses obvious junk before invoking the function; the function checks the rest.
      validationRegex: '^[!-~]{32,4096}$',
    });

    const integrations = new Map(ROUTE_GROUPS.map((g) => [g, new apigw.LambdaIntegration(fns[g].fn, { allowTestInvoke: false })]));
    for (const route of ROUTES) {
      const resource = this.api.root.resourceForPath(route.path);
      const method = resource.addMethod(
        route.method,
        integrations.get(route.group)!,
        route.auth === 'public'
          ? { authorizationType: apigw.AuthorizationType.NONE, operationName: route.operationId }
          : { authorizationType: apigw.AuthorizationType.CUSTOM, authorizer, operationName: route.operationId, apiKeyRequired: true },
      );
      if (route.auth === 'public') {
        Validations.of(method).acknowledge({ id: 'AwsSolutions::AwsSolutions-APIG4', reason: 'Public protocol/metadata route: protected by the protocol itself or serves public data.' });
        Validations.of(method).acknowledge({ id: 'AwsSolutions::AwsSolutions-COG4', reason: 'Public route: no caller identity by design.' });
      } else {
        Validations.of(method).acknowledge({ id: 'AwsSolutions::AwsSolutions-COG4', reason: 'Callers are API consumers with API keys, authorized by the Lambda authorizer, not Cognito users.' });
      }
    }
    // A declared function that is no route group, worker, authorizer or bootstrap would be deployed for nothing.
    const idle = FUNCTION_NAMES.filter((n) => !(ROUTE_GROUPS as readonly string[]).includes(n) && !WORKER_ENTRIES[n] && n !== 'authorizer' && n !== 'bootstrap');
    if (idle.length > 0) throw new Error(`functions with no routes and no trigger: ${idle.join(', ')}`);

    alarms.add('api-5xx', 'the API answered 5xx at least 5 times in 5 minutes', this.api.metricServerError({ period: Alarms.FIVE_MINUTES, statistic: 'Sum' }), 5);
    alarms.add(
      'authorizer-failures',
      'the authorizer failed (not a refusal): every authenticated request may be failing',
      new cloudwatch.Metric({ namespace: props.serviceName, metricName: AUTHORIZER_METRICS.failures, dimensionsMap: { service: props.serviceName }, period: Alarms.FIVE_MINUTES, statistic: 'Sum' }),
      1,
    );

    Validations.of(this.api.node.findChild('CloudWatchRole')).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason: "API Gateway's account-level logging role: AWS's own policy made for exactly this, and needed for stage error logs (APIG6).",
    });
    Validations.of(this.api).acknowledge({ id: 'AwsSolutions::AwsSolutions-APIG2', reason: 'Requests are validated in the functions against the same schemas that generate /openapi.json, so errors keep the service shape.' });
    Validations.of(this.api).acknowledge({ id: 'AwsSolutions::AwsSolutions-APIG3', reason: 'WAF is an account-level choice (cost, rules); attach a web ACL to the stage where the platform wants one (README).' });

    if (props.customDomain) {
      const domain = this.api.addDomainName('CustomDomain', {
        domainName: props.customDomain.domainName,
        certificate: acm.Certificate.fromCertificateArn(this, 'CustomDomainCertificate', props.customDomain.certificateArn),
        endpointType: apigw.EndpointType.REGIONAL,
        securityPolicy: apigw.SecurityPolicy.TLS_1_2,
      });
      new CfnOutput(this, 'CustomDomainTarget', {
        value: domain.domainNameAliasDomainName,
        description: `Point ${props.customDomain.domainName} here (a CNAME, or a Route 53 alias with hosted zone ${'${CustomDomainTargetZone}'})`,
      });
      new CfnOutput(this, 'CustomDomainTargetZone', { value: domain.domainNameAliasHostedZoneId });
    }
    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Base URL of the API' });
    new CfnOutput(this, 'BaseKeyCommand', {
      description: 'Run once after the first deploy to obtain the base (super-admin) key',
      value: `aws lambda invoke --function-name ${fns.bootstrap.fn.functionName} --cli-binary-format raw-in-base64-out --payload '{}' /dev/stdout`,
    });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'AlarmTopicArn', { value: alarms.topic.topicArn, description: 'Subscribe more receivers (chat, paging) here' });
  }
}
