import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { SOURCE_LIMITS } from '../../lib/service/api-settings';
import type { SOURCE_LIMITED } from '../../lib/service/gateway-responses';
import { publicPathPatterns } from '../../lib/service/public-paths';
import type { Route } from '../../lib/service/routes';

/** WAF's rate-based rules evaluate over one of these trailing windows (seconds). */
const WAF_WINDOWS = [60, 120, 300, 600];
/** WAF's bounds on a rate-based rule's limit. */
const WAF_MIN_LIMIT = 10;
const WAF_MAX_LIMIT = 2_000_000_000;
/**
 * The AWS common rule set's rules that would refuse legitimate requests to this API: they run in Count
 * (matches are counted and logged, nothing is blocked). Every other rule of the set blocks.
 */
export const COMMON_RULES_COUNTED: Readonly<Record<string, string>> = {
  SizeRestrictions_BODY:
    'Blocks bodies over 8 KB; routes accept 64 KiB by default and up to 5 MiB (bulk email), and each refuses more itself (413, or 400 where the contract says so).',
  GenericRFI_BODY:
    'Blocks bodies holding URLs whose host is an IPv4 address; bodies carry URLs by design (webhook targets, issuer and response URLs, trusted issuers), the service fetches none of them without its own SSRF checks, and a public address is a legitimate host.',
  GenericLFI_BODY:
    "Blocks bodies holding path traversal (`../`); no input ever names a file here, while credential claims, definitions' pattern filters and JSON-LD documents are free text in which `../` is legitimate.",
};

export interface SourceLimitsProps {
  readonly stage: apigw.Stage;
  readonly stageName: string;
  readonly routes: readonly Route[];
  readonly limits: typeof SOURCE_LIMITS;
  readonly refusal: typeof SOURCE_LIMITED;
  /** Request headers that carry credentials: never written to the WAF log. */
  readonly redactHeaders: readonly string[];
}

/**
 * The stage's AWS WAF web ACL: per client address (IP) rate-based rules over every request and,
 * tighter, over the public routes, answering in the service's error shape; then AWS's common rule set.
 * Requests WAF blocks or counts are logged (credential headers redacted); allowed ones are not.
 */
export class SourceLimits extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: SourceLimitsProps) {
    super(scope, id);
    const { limits, refusal } = props;
    if (!WAF_WINDOWS.includes(limits.windowSeconds)) throw new Error(`SOURCE_LIMITS.windowSeconds must be one of WAF's windows: ${WAF_WINDOWS.join(', ')}`);
    for (const limit of [limits.allRequests, limits.publicRequests]) {
      if (!Number.isInteger(limit) || limit < WAF_MIN_LIMIT || limit > WAF_MAX_LIMIT) throw new Error(`a SOURCE_LIMITS count must be an integer from ${WAF_MIN_LIMIT} to ${WAF_MAX_LIMIT}`);
    }
    const stack = Stack.of(this);
    const visibility = (metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({ cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true });
    const bodyKey = 'source-limited';
    const block: wafv2.CfnWebACL.RuleActionProperty = { block: { customResponse: { responseCode: refusal.status, customResponseBodyKey: bodyKey } } };
    // Percent-decoded and normalized (`//`, `./`), as API Gateway resolves the route: no spelling of a public path escapes its rule.
    const pathMatch = (regexString: string): wafv2.CfnWebACL.StatementProperty => ({
      regexMatchStatement: {
        regexString,
        fieldToMatch: { uriPath: {} },
        textTransformations: [
          { priority: 0, type: 'URL_DECODE' },
          { priority: 1, type: 'NORMALIZE_PATH' },
        ],
      },
    });
    const publicPaths = publicPathPatterns(props.routes, props.stageName).map(pathMatch);
    const scopeDown = publicPaths.length === 1 ? publicPaths[0]! : { orStatement: { statements: publicPaths } };

    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description: `${stack.stackName}: per-source limits and AWS common rules for the API stage`,
      defaultAction: { allow: {} },
      visibilityConfig: visibility(`${stack.stackName}-web-acl`),
      customResponseBodies: { [bodyKey]: { contentType: 'APPLICATION_JSON', content: JSON.stringify({ error: refusal.error, code: refusal.code }) } },
      rules: [
        // First, so that every request of a source counts, whatever a later rule decides.
        {
          name: 'per-source-all-requests',
          priority: 0,
          action: block,
          statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit: limits.allRequests, evaluationWindowSec: limits.windowSeconds } },
          visibilityConfig: visibility('per-source-all-requests'),
        },
        {
          name: 'per-source-public-routes',
          priority: 1,
          action: block,
          statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit: limits.publicRequests, evaluationWindowSec: limits.windowSeconds, scopeDownStatement: scopeDown } },
          visibilityConfig: visibility('per-source-public-routes'),
        },
        {
          name: 'aws-common-rule-set',
          priority: 2,
          overrideAction: { none: {} },
          statement: {
            managedRuleGroupStatement: {
              vendorName: 'AWS',
              name: 'AWSManagedRulesCommonRuleSet',
              ruleActionOverrides: Object.keys(COMMON_RULES_COUNTED).map((name) => ({ name, actionToUse: { count: {} } })),
            },
          },
          visibilityConfig: visibility('aws-common-rule-set'),
        },
      ],
    });

    new wafv2.CfnWebACLAssociation(this, 'StageAssociation', { resourceArn: props.stage.stageArn, webAclArn: this.webAcl.attrArn });

    // WAF writes only to log groups named aws-waf-logs-…, and takes their ARN without the trailing `:*`.
    const logGroupName = `aws-waf-logs-${stack.stackName}`;
    const logGroup = new logs.LogGroup(this, 'Logs', { logGroupName, retention: logs.RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY });
    const logging = new wafv2.CfnLoggingConfiguration(this, 'Logging', {
      resourceArn: this.webAcl.attrArn,
      logDestinationConfigs: [stack.formatArn({ service: 'logs', resource: 'log-group', resourceName: logGroupName, arnFormat: ArnFormat.COLON_RESOURCE_NAME })],
      redactedFields: props.redactHeaders.map((name) => ({ singleHeader: { Name: name } })),
      loggingFilter: {
        DefaultBehavior: 'DROP',
        Filters: [{ Behavior: 'KEEP', Requirement: 'MEETS_ANY', Conditions: [{ ActionCondition: { Action: 'BLOCK' } }, { ActionCondition: { Action: 'COUNT' } }] }],
      },
    });
    logging.node.addDependency(logGroup);
  }
}
