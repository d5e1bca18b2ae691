import { Annotations, ArnFormat, Aws, CfnOutput, Duration, RemovalPolicy, Size, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ACCESS_TAGS, FUNCTION_ACCESS, FUNCTION_NAMES, type FunctionName } from '../../lib/service/access';
import { routeThrottle, SOURCE_LIMITS, type ThrottleLimits } from '../../lib/service/api-settings';
import { AREAS, FUNCTION_AREAS, ROOT_AREA, type Area } from '../../lib/service/areas';
import { AUTHORIZER_METRICS } from '../../lib/service/metrics';
import { GATEWAY_ERRORS, SOURCE_LIMITED } from '../../lib/service/gateway-responses';
import { DLQ_RETENTION_DAYS, QUEUES, TABLE, type QueueId } from '../../lib/service/resources';
import { ROUTES, type Route } from '../../lib/service/routes';
import { platformUsageKey } from '../../lib/service/usage-keys';
import { Alarms, AlarmTopic } from '../constructs/alarms';
import { stackKeyTag, UsageKeysPolicy } from '../constructs/declared-access';
import type { ServiceFunction } from '../constructs/service-function';
import { SourceLimits } from '../constructs/source-limits';
import { apiLayout } from './api-layout';
import { AreaStack } from './area-stack';
import { addAreaFunctions, addAreaRoutes, checkDeclarations, functionsOf, tenantPlanName, type ServiceConfig, type ServiceRefs } from './service-functions';

/** The API's one stage: execute-api URLs start every path with it. */
export const STAGE_NAME = 'prod';
/** Request headers that carry credentials (API keys, subwallet tokens, OID4VCI access tokens and DPoP proofs). */
const CREDENTIAL_HEADERS = ['x-api-key', 'authorization', 'dpop'];
/** The authorizer: the header it reads, and the shape of a key worth invoking it for (the function checks the rest). */
const AUTHORIZER = { identitySource: 'method.request.header.x-api-key', validationRegex: '^[!-~]{32,4096}$' } as const;

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
  /** did:indy namespace of this deployment (docs/dids.md). */
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
  /** The route table (lib/service/routes.ts unless a test gives another). */
  readonly routes?: readonly Route[];
}


/** The construct id of an area's nested stack: `status-lists` → `StatusLists`. */
export const areaStackId = (area: Area) => area.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');

/**
 * The service. The root stack holds what every area shares — the table, the HMAC key, the queues and
 * their dead-letter queues, the alarm topic, the REST API with its stage, gateway responses, usage plans,
 * authorizer and WAF web ACL, and the API resources routes of several areas pass through — and the `api`
 * area (the authorizer and the API description). Every other area (lib/service/areas.ts) is a nested
 * stack with its functions and the methods of their routes, so that no template nears CloudFormation's
 * 500 resources. `cdk deploy` deploys them together.
 */
export class ServiceStack extends Stack {
  readonly api: apigw.RestApi;
  readonly table: dynamodb.Table;
  readonly areas: ReadonlyMap<Area, AreaStack>;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    const { throttles } = props;
    const routes = props.routes ?? ROUTES;
    checkDeclarations(routes);
    if (props.authorizerCacheTtlSeconds > 3600) throw new Error('authorizerCacheTtlSeconds must be at most 3600 (API Gateway)');

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

    // DIDComm connection keys are software keys (KMS has no X25519/Ed25519 key agreement), AnonCreds
    // private keys BigInt ones: each wallet's data keys (one per purpose) are made and unsealed under this
    // key, with the wallet and the purpose as encryption context (docs/didcomm.md, docs/anoncreds.md).
    const didcommKey = new kms.Key(this, 'DidcommDataKeysKey', {
      description: `${props.serviceName}: seals the data keys of each wallet, one per purpose: DIDComm connection keys, AnonCreds private keys (GenerateDataKey, Decrypt; encryption context wallet_id, purpose)`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // Every key the stack owns (this HMAC key, the alarm topic's, any added later, in any nested stack)
    // carries the service tag: the tenant roles' TagResource only takes keys without one.
    Tags.of(this).add(ACCESS_TAGS.service, stackKeyTag(this.stackName), { includeResourceTypes: ['AWS::KMS::Key'] });

    const alarmTopic = new AlarmTopic(this, 'AlarmTopic', { serviceName: props.serviceName, ...(props.alarmEmail ? { email: props.alarmEmail } : {}) });
    if (!props.alarmEmail) Annotations.of(alarmTopic).addWarningV2('alarm-email', 'No alarmEmail context: alarms publish to a topic nobody subscribes to');
    const alarms = new Alarms(this, 'Alarms', { serviceName: props.serviceName, topic: alarmTopic.topic });

    // Work queues, each with a DLQ; anything parked in a dead-letter store needs a human.
    const queues = {} as Record<QueueId, sqs.Queue>;
    for (const q of QUEUES) {
      const fifo = q.fifo ? { fifo: true, contentBasedDeduplication: true } : {};
      const dlq = new sqs.Queue(this, `${q.id}-dlq`, { retentionPeriod: Duration.days(DLQ_RETENTION_DAYS), encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true, ...(q.fifo ? { fifo: true } : {}) });
      queues[q.id] = new sqs.Queue(this, `${q.id}-queue`, {
        ...fifo,
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

    // API: REST API (see docs/design.md, section 2, "REST API, not HTTP API"), one Lambda integration per endpoint group. Deployed
    // by the explicit Deployment below, once every area's methods exist.
    this.api = new apigw.RestApi(this, 'Api', {
      restApiName: props.serviceName,
      description: 'Credential issuance and verification service',
      endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
      // gzip for clients that accept it (the status-list drafts ask for it; lists and metadata compress well).
      minCompressionSize: Size.kibibytes(1),
      // AnonCreds tails files: the function answers them base64-encoded, API Gateway sends the bytes.
      binaryMediaTypes: ['application/octet-stream'],
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      // Per-tenant throttling: the authorizer names the caller's usage-plan key.
      apiKeySourceType: apigw.ApiKeySourceType.AUTHORIZER,
      deploy: false,
    });
    const api = this.api;

    // Bodies in the service's shape; a status only where we change API Gateway's on purpose.
    const gatewayResponses = Object.entries(GATEWAY_ERRORS).map(([type, e]) =>
      api.addGatewayResponse(`gw-${type}`, {
        type: apigw.ResponseType.of(type),
        ...('status' in e ? { statusCode: String(e.status) } : {}),
        templates: { 'application/json': JSON.stringify({ error: e.error, code: e.code }) },
      }),
    );

    // Resources that routes of several areas pass through: created once, here.
    const areaOfRoute = (r: Route) => FUNCTION_AREAS[r.group];
    const layout = apiLayout(routes, areaOfRoute);
    const sharedResources = new Map(layout.shared.map((path) => [path, api.root.resourceForPath(path)]));

    const config: ServiceConfig = {
      root: props.root,
      serviceName: props.serviceName,
      stackName: this.stackName,
      stageName: STAGE_NAME,
      indyNamespace: props.indyNamespace,
      limits: props.limits,
      mail: props.email ?? { sender: 'credentials@example.invalid' },
      publicBaseUrl: props.publicBaseUrl,
      taa: props.taa,
    };
    if (!props.email) Annotations.of(this).addWarningV2('email-sender', 'No emailSender context: bulk email cannot be sent (set -c emailSender=<an SES-verified address>)');

    // The root's own area: the authorizer, then the API description's routes.
    let authorizer: apigw.CfnAuthorizer | undefined;
    const authorizerRef = (): apigw.IAuthorizer => {
      if (!authorizer) throw new Error('the authorizer is made after the functions of the root area');
      return { authorizerId: authorizer.ref, authorizationType: apigw.AuthorizationType.CUSTOM };
    };
    const refs: ServiceRefs = {
      tableName: this.table.tableName,
      table: this.table,
      tableWithStream: this.table,
      macKeyArn: macKey.keyArn,
      didcommKeyArn: didcommKey.keyArn,
      queue: (q) => queues[q],
      queueUrl: (q) => queues[q].queueUrl,
      relayFailures,
      api,
      get authorizer() {
        return authorizerRef();
      },
      resourceAt: (path) => api.root.resourceForPath(path),
    };
    const rootFunctions = addAreaFunctions(this, ROOT_AREA, config, refs, alarms);
    const authorizerFn = rootFunctions.authorizer;
    if (!authorizerFn) throw new Error(`the authorizer belongs to the root area (${ROOT_AREA}): the API needs it before any area`);
    // An L1 authorizer: the construct-level one attaches only through a method of this very stack.
    authorizer = new apigw.CfnAuthorizer(this, 'ApiKeyAuthorizer', {
      restApiId: api.restApiId,
      name: `${this.stackName}-api-key`,
      type: 'TOKEN',
      authorizerUri: `arn:${Aws.PARTITION}:apigateway:${Aws.REGION}:lambda:path/2015-03-31/functions/${authorizerFn.fn.functionArn}/invocations`,
      identitySource: AUTHORIZER.identitySource,
      authorizerResultTtlInSeconds: props.authorizerCacheTtlSeconds,
      // Refuses obvious junk before invoking the function; the function checks the rest.
      identityValidationExpression: AUTHORIZER.validationRegex,
    });
    authorizerFn.fn.addPermission('AuthorizerInvoke', {
      principal: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      sourceArn: this.formatArn({ service: 'execute-api', resource: api.restApiId, resourceName: `authorizers/${authorizer.ref}`, arnFormat: ArnFormat.SLASH_RESOURCE_NAME }),
    });
    addAreaRoutes(this, routes.filter((r) => areaOfRoute(r) === ROOT_AREA), rootFunctions, refs, config);

    // Every other area: a nested stack, handed the values it uses as parameters.
    const areas = new Map<Area, AreaStack>();
    for (const area of AREAS) {
      if (area === ROOT_AREA || functionsOf(area).length === 0) continue;
      areas.set(
        area,
        new AreaStack(this, areaStackId(area), {
          area,
          config,
          routes: routes.filter((r) => areaOfRoute(r) === area),
          inputs: {
            tableName: this.table.tableName,
            tableArn: this.table.tableArn,
            tableStreamArn: this.table.tableStreamArn!,
            macKeyArn: macKey.keyArn,
            didcommKeyArn: didcommKey.keyArn,
            alarmTopicArn: alarmTopic.topic.topicArn,
            relayFailuresQueueArn: relayFailures.queueArn,
            queues: Object.fromEntries(QUEUES.map((q) => [q.id, { arn: queues[q.id].queueArn, url: queues[q.id].queueUrl }])) as Record<QueueId, { arn: string; url: string }>,
            restApiId: api.restApiId,
            rootResourceId: api.restApiRootResourceId,
            authorizerId: authorizer.ref,
            sharedResources: new Map([...sharedResources].map(([path, r]) => [path, r.resourceId])),
          },
        }),
      );
    }
    this.areas = areas;
    const fns = { ...rootFunctions, ...Object.assign({}, ...[...areas.values()].map((a) => a.functions)) } as Record<FunctionName, ServiceFunction>;

    // The deployment: after every area's methods, and replaced (a new snapshot of the API) whenever
    // what the methods are built from changes — nested stacks' methods do not reach CDK's own hash.
    const deployment = new apigw.Deployment(this, 'Deployment', { api, description: `${props.serviceName} API` });
    deployment.addToLogicalId({
      routes,
      areas: FUNCTION_AREAS,
      shared: layout.shared,
      gatewayErrors: GATEWAY_ERRORS,
      authorizer: { ...AUTHORIZER, ttl: props.authorizerCacheTtlSeconds },
      integration: 'lambda-proxy',
    });
    for (const dependency of [...areas.values(), ...gatewayResponses, authorizer]) deployment.node.addDependency(dependency);

    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', { retention: logs.RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY });
    const publicMethodOptions = Object.fromEntries(
      routes.flatMap((r) => {
        const limits = routeThrottle(r, throttles);
        return limits ? [[`${r.path}/${r.method}`, { throttlingRateLimit: limits.rateLimit, throttlingBurstLimit: limits.burstLimit }]] : [];
      }),
    );
    if (Math.max(throttles.publicRoute.rateLimit, throttles.protocolRoute.rateLimit) >= throttles.stage.rateLimit) {
      Annotations.of(this).addWarningV2('public-throttle', 'a public route may take as much as an authenticated method: anonymous traffic is not held below tenants');
    }
    const stage = new apigw.Stage(this, 'Stage', {
      deployment,
      stageName: STAGE_NAME,
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
          wafStatus: apigw.AccessLogField.contextWafResponseCode(),
        }),
      ),
    });
    api.deploymentStage = stage;

    // Per client address: WAF on the stage, with the route throttles above as the ceiling for all sources together.
    new SourceLimits(this, 'SourceLimits', { stage, stageName: STAGE_NAME, routes, limits: SOURCE_LIMITS, refusal: SOURCE_LIMITED, redactHeaders: CREDENTIAL_HEADERS });

    // Usage plans: "tenants" holds one key per wallet (added at subwallet creation), "platform" the base key's.
    const stageRef = { api, stage };
    const tenantPlan = api.addUsagePlan('TenantsPlan', {
      name: tenantPlanName(this.stackName),
      description: 'Each wallet: all its API keys and tokens share one bucket',
      throttle: { rateLimit: throttles.tenant.rateLimit, burstLimit: throttles.tenant.burstLimit },
      apiStages: [stageRef],
    });
    const platformPlan = api.addUsagePlan('PlatformPlan', {
      name: `${this.stackName}-platform`,
      description: 'The base (super-admin) key',
      throttle: { rateLimit: throttles.platform.rateLimit, burstLimit: throttles.platform.burstLimit },
      apiStages: [stageRef],
    });
    platformPlan.addApiKey(new apigw.ApiKey(this, 'PlatformUsageKey', { value: platformUsageKey(this.stackName), description: 'Throttling bucket of the base key (identifies, grants nothing)' }));
    for (const name of FUNCTION_NAMES.filter((n) => FUNCTION_ACCESS[n].shared?.usageKeys)) {
      new UsageKeysPolicy(this, `${name}-usage-keys`, { role: fns[name].role, tenantUsagePlanId: tenantPlan.usagePlanId });
    }

    alarms.add('api-5xx', 'the API answered 5xx at least 5 times in 5 minutes', api.metricServerError({ period: Alarms.FIVE_MINUTES, statistic: 'Sum' }), 5);
    alarms.add(
      'authorizer-failures',
      'the authorizer failed (not a refusal): every authenticated request may be failing',
      new cloudwatch.Metric({ namespace: props.serviceName, metricName: AUTHORIZER_METRICS.failures, dimensionsMap: { service: props.serviceName }, period: Alarms.FIVE_MINUTES, statistic: 'Sum' }),
      1,
    );

    Validations.of(api.node.findChild('CloudWatchRole')).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason: "API Gateway's account-level logging role: AWS's own policy made for exactly this, and needed for stage error logs (APIG6).",
    });
    Validations.of(api).acknowledge({ id: 'AwsSolutions::AwsSolutions-APIG2', reason: 'Requests are validated in the functions against the same schemas that generate /openapi.json, so errors keep the service shape.' });

    if (props.customDomain) {
      const domain = api.addDomainName('CustomDomain', {
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
    new CfnOutput(this, 'ApiUrl', { value: api.url, description: 'Base URL of the API' });
    new CfnOutput(this, 'BaseKeyCommand', {
      description: 'Run once after the first deploy to obtain the base (super-admin) key',
      value: `aws lambda invoke --function-name ${fns.bootstrap.fn.functionName} --cli-binary-format raw-in-base64-out --payload '{}' /dev/stdout`,
    });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'AlarmTopicArn', { value: alarmTopic.topic.topicArn, description: 'Subscribe more receivers (chat, paging) here' });
  }
}
