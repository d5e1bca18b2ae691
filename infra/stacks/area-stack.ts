import { CfnParameter, NestedStack } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { FunctionName } from '../../lib/service/access';
import type { Area } from '../../lib/service/areas';
import type { QueueId } from '../../lib/service/resources';
import type { Route } from '../../lib/service/routes';
import { Alarms } from '../constructs/alarms';
import type { ServiceFunction } from '../constructs/service-function';
import { resourceParameterNames, sharedAncestor } from './api-layout';
import { addAreaFunctions, addAreaRoutes, type ServiceConfig, type ServiceRefs } from './service-functions';

/** What an area receives from the root stack: every value it uses becomes one parameter of its template. */
export interface AreaInputs {
  readonly tableName: string;
  readonly tableArn: string;
  readonly tableStreamArn: string;
  readonly macKeyArn: string;
  readonly didcommKeyArn: string;
  readonly alarmTopicArn: string;
  readonly relayFailuresQueueArn: string;
  readonly queues: Readonly<Record<QueueId, { readonly arn: string; readonly url: string }>>;
  readonly restApiId: string;
  readonly rootResourceId: string;
  readonly authorizerId: string;
  /** Ids of the API resources that routes of several areas pass through (created by the root), by path. */
  readonly sharedResources: ReadonlyMap<string, string>;
}

export interface AreaStackProps {
  readonly area: Area;
  readonly config: ServiceConfig;
  /** The routes of this area's functions. */
  readonly routes: readonly Route[];
  readonly inputs: AreaInputs;
}

const pascal = (s: string) => s.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');

/**
 * One area of the service as a nested stack: its functions with their roles, log groups, triggers and
 * alarms, and the API resources and methods of its routes. It reaches the root's resources only through
 * its parameters (`inputs`), each created when first used, so the template lists exactly what the area
 * depends on.
 */
export class AreaStack extends NestedStack {
  readonly functions: Partial<Record<FunctionName, ServiceFunction>>;
  private readonly inputRefs = new Map<string, string>();

  constructor(scope: Construct, id: string, props: AreaStackProps) {
    super(scope, id, { description: `${props.config.stackName}: area ${props.area}` });
    const { inputs } = props;
    const input = (name: string, value: string, description: string) => {
      let ref = this.inputRefs.get(name);
      if (ref === undefined) {
        ref = new CfnParameter(this, name, { type: 'String', description }).valueAsString;
        this.setParameter(name, value);
        this.inputRefs.set(name, ref);
      }
      return ref;
    };
    const once = <T>(make: () => T) => {
      let value: T | undefined;
      return () => (value ??= make());
    };
    const resourceNames = resourceParameterNames([...inputs.sharedResources.keys()]);

    const table = once(() => dynamodb.Table.fromTableAttributes(this, 'Table', { tableArn: input('TableArn', inputs.tableArn, 'The service table') }));
    const tableWithStream = once(() =>
      dynamodb.Table.fromTableAttributes(this, 'TableStream', { tableArn: input('TableArn', inputs.tableArn, 'The service table'), tableStreamArn: input('TableStreamArn', inputs.tableStreamArn, "The table's stream") }),
    );
    const queueUrl = (q: QueueId) => input(`${pascal(q)}QueueUrl`, inputs.queues[q].url, `The ${q} queue's URL`);
    const queues = new Map<QueueId, sqs.IQueue>();
    const queue = (q: QueueId) => {
      if (!queues.has(q)) {
        queues.set(
          q,
          sqs.Queue.fromQueueAttributes(this, `${q}-queue`, {
            queueArn: input(`${pascal(q)}QueueArn`, inputs.queues[q].arn, `The ${q} queue`),
            queueUrl: queueUrl(q),
          }),
        );
      }
      return queues.get(q)!;
    };
    const relayFailures = once(() => sqs.Queue.fromQueueArn(this, 'webhook-relay-failures', input('RelayFailuresQueueArn', inputs.relayFailuresQueueArn, "The relay's on-failure destination")));
    const restApiId = () => input('RestApiId', inputs.restApiId, 'The REST API');
    const api = once(() => apigw.RestApi.fromRestApiId(this, 'Api', restApiId()));
    // The same API with its root resource, for routes under no shared resource.
    const apiRoot = once(() => apigw.RestApi.fromRestApiAttributes(this, 'ApiRoot', { restApiId: restApiId(), rootResourceId: input('RootResourceId', inputs.rootResourceId, "The API's root resource") }).root);
    const sharedResources = new Map<string, apigw.IResource>();
    const shared = [...inputs.sharedResources.keys()];
    const refs: ServiceRefs = {
      get tableName() {
        return input('TableName', inputs.tableName, 'The service table');
      },
      get table() {
        return table();
      },
      get tableWithStream() {
        return tableWithStream();
      },
      get macKeyArn() {
        return input('MacKeyArn', inputs.macKeyArn, 'The HMAC key of API keys, tokens and webhook secrets');
      },
      get didcommKeyArn() {
        return input('DidcommKeyArn', inputs.didcommKeyArn, "The KMS key of DIDComm connection keys' data keys");
      },
      queue,
      queueUrl,
      get relayFailures() {
        return relayFailures();
      },
      get api() {
        return api();
      },
      get authorizer() {
        return { authorizerId: input('AuthorizerId', inputs.authorizerId, "The API's TOKEN authorizer"), authorizationType: apigw.AuthorizationType.CUSTOM };
      },
      resourceAt: (path) => {
        const base = sharedAncestor(path, shared);
        if (base === null) return apiRoot().resourceForPath(path);
        if (!sharedResources.has(base)) {
          const name = resourceNames.get(base)!;
          sharedResources.set(base, apigw.Resource.fromResourceAttributes(this, `${name}Import`, { restApi: api(), path: base, resourceId: input(name, inputs.sharedResources.get(base)!, `The API resource ${base}`) }));
        }
        return sharedResources.get(base)!.resourceForPath(path.slice(base.length + 1));
      },
    };
    const alarms = new Alarms(this, 'Alarms', {
      serviceName: props.config.serviceName,
      topic: sns.Topic.fromTopicArn(this, 'AlarmTopic', input('AlarmTopicArn', inputs.alarmTopicArn, 'Where alarms publish')),
    });
    this.functions = addAreaFunctions(this, props.area, props.config, refs, alarms);
    addAreaRoutes(this, props.routes, this.functions, refs, props.config);
  }
}
