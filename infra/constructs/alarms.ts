import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

export interface AlarmTopicProps {
  readonly serviceName: string;
  /** Who hears the alarms (CDK context `alarmEmail`); without it the topic exists for other subscribers. */
  readonly email?: string;
}

/**
 * The one SNS topic every alarm of the service publishes to, which mails a person. Encrypted with a key
 * of our own: CloudWatch cannot publish to a topic under the AWS-managed SNS key.
 */
export class AlarmTopic extends Construct {
  readonly topic: sns.Topic;

  constructor(scope: Construct, id: string, props: AlarmTopicProps) {
    super(scope, id);
    const key = new kms.Key(this, 'TopicKey', {
      description: `${props.serviceName}: encrypts the alarm topic`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        // Only on behalf of this account's alarms (confused-deputy guard).
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    this.topic = new sns.Topic(this, 'Topic', { displayName: `${props.serviceName} alarms`, masterKey: key, enforceSSL: true });
    if (props.email) this.topic.addSubscription(new subscriptions.EmailSubscription(props.email));
  }
}

export interface AlarmsProps {
  readonly serviceName: string;
  /** The alarm topic (in a nested stack: imported by its ARN). */
  readonly topic: sns.ITopic;
}

/** Alarms of one stack, each notifying the alarm topic when it fires and when it recovers. */
export class Alarms extends Construct {
  private readonly action: actions.SnsAction;
  private readonly prefix: string;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    this.prefix = props.serviceName;
    this.action = new actions.SnsAction(props.topic);
  }

  add(id: string, description: string, metric: cloudwatch.IMetric, threshold: number, evaluationPeriods = 1): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, id, {
      alarmDescription: `${this.prefix}: ${description}`,
      metric,
      threshold,
      evaluationPeriods,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    return alarm;
  }

  static readonly FIVE_MINUTES = Duration.minutes(5);
}
