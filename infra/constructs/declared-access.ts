import { Stack, Token, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { KEY_DELETION_WINDOW_DAYS, KMS_KEY_SPECS } from '../../lib/keys/port';
import { ACCESS_TAGS, DATA_KEY_CONTEXT, DATA_KEY_PURPOSES, dataKeyActions, declaresDataKeys, FUNCTION_ACCESS, walletPartitionPatterns, type DataGrant, type FunctionName } from '../../lib/service/access';
import { walletPartitionKey, type QueueId } from '../../lib/service/resources';

/** The tag a wallet's session carries, and the one its issuer keys carry. */
export const WALLET_TAG = ACCESS_TAGS.wallet;
const SERVICE_TAG = ACCESS_TAGS.service;
const PRINCIPAL_WALLET = `\${aws:PrincipalTag/${WALLET_TAG}}`;
const ISSUER_KEY_SPECS = Object.values(KMS_KEY_SPECS).map((s) => s.keySpec);

/**
 * The `service` tag of the keys the stack itself owns (HMAC, alarm topic): present, so no session can tag
 * them, and never the issuer keys' value (`:` cannot occur in a stack name), so no issuer-key grant reaches them.
 */
export const stackKeyTag = (stackName: string) => `${stackName}:stack`;

export interface DeclaredAccessProps {
  readonly fn: FunctionName;
  /** The function's execution role: its own (shared) grants go here. */
  readonly role: iam.Role;
  readonly table: dynamodb.ITable;
  /** The service's HMAC key (GenerateMac). */
  readonly macKeyArn: string;
  /** The KMS key of DIDComm data keys: required when the function declares `tenant.dataKeys`. */
  readonly didcommKeyArn?: string;
  readonly queue: (id: QueueId) => sqs.IQueue;
  /** Value of the `service` tag on this service's issuer keys. */
  readonly issuerKeyTag: string;
  /** What mail may be sent as: the sender address, and the SES configuration set if one is used. */
  readonly mail: { readonly sender: string; readonly configurationSet?: string | undefined };
}

function dataStatement(table: dynamodb.ITable, grant: DataGrant): iam.PolicyStatement {
  return new iam.PolicyStatement({
    actions: grant.actions.map((a) => `dynamodb:${a}`),
    resources: [grant.on === 'table' ? table.tableArn : `${table.tableArn}/index/${grant.on}`],
    // On the table, the partitions the grant names; an index holds one kind of lookup and is itself the bound.
    // ForAllValues refuses a request naming any other partition ([W#7, W#8]) but holds when the key is
    // absent (a Scan has none): Null false makes the key required.
    ...(grant.on === 'table'
      ? { conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...grant.partitions] }, Null: { 'dynamodb:LeadingKeys': 'false' } } }
      : {}),
  });
}

/** A role only `role` may assume, only with a `wallet_id` session tag and no other tag. */
function walletSessionRole(scope: Construct, id: string, role: iam.Role, description: string): iam.Role {
  const sessionRole = new iam.Role(scope, id, {
    description,
    assumedBy: new iam.PrincipalWithConditions(new iam.SessionTagsPrincipal(new iam.ArnPrincipal(role.roleArn)), {
      // A session must name its wallet, and carry no other tag.
      StringLike: { [`aws:RequestTag/${WALLET_TAG}`]: '?*' },
      'ForAllValues:StringEquals': { 'aws:TagKeys': [WALLET_TAG] },
    }),
  });
  role.addToPolicy(new iam.PolicyStatement({ actions: ['sts:AssumeRole', 'sts:TagSession'], resources: [sessionRole.roleArn] }));
  return sessionRole;
}

/**
 * A function's permissions, built from its declaration in lib/service/access.ts and nothing else: the
 * shared grants on its execution role, and — when it acts for wallets — a tenant role that only this
 * execution role may assume, only with a `wallet_id` session tag, whose grants reach only that
 * wallet's partitions and issuer keys; and, for tenancy, a registry role assumed the same way whose
 * grants reach only the reservation items and the wallet's record partition (wallet creation). The
 * one grant not made here is `usageKeys`: it names the tenants' usage plan, which exists only once
 * the API is deployed, so the root stack attaches it ({@link UsageKeysPolicy}).
 */
export class DeclaredAccess extends Construct {
  readonly tenantRole?: iam.Role;
  readonly registryRole?: iam.Role;

  constructor(scope: Construct, id: string, props: DeclaredAccessProps) {
    super(scope, id);
    const access = FUNCTION_ACCESS[props.fn];
    const { role, table } = props;

    for (const grant of access.shared?.data ?? []) role.addToPolicy(dataStatement(table, grant));
    if (access.shared?.mac) role.addToPolicy(new iam.PolicyStatement({ actions: ['kms:GenerateMac'], resources: [props.macKeyArn] }));
    for (const q of access.shared?.sendTo ?? []) {
      role.addToPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [props.queue(q).queueArn] }));
    }
    if (access.shared?.mail) {
      const stack = Stack.of(this);
      role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['ses:SendRawEmail'],
          // The sender's own identities (the address, or its domain, whichever is verified), only as that sender.
          resources: [
            stack.formatArn({ service: 'ses', resource: 'identity', resourceName: props.mail.sender }),
            stack.formatArn({ service: 'ses', resource: 'identity', resourceName: props.mail.sender.split('@')[1] ?? props.mail.sender }),
            ...(props.mail.configurationSet ? [stack.formatArn({ service: 'ses', resource: 'configuration-set', resourceName: props.mail.configurationSet })] : []),
          ],
          conditions: { StringEquals: { 'ses:FromAddress': props.mail.sender } },
        }),
      );
    }
    const registry = access.registry;
    if (registry) {
      const registryRole = walletSessionRole(this, 'RegistryRole', role, `Registry sessions of the ${props.fn} function: wallet-name and public-reference reservations, with the wallet's record`);
      this.registryRole = registryRole;
      if (registry.record.length) {
        // The record partition `W#<wallet>` exactly: none of the wallet's other partitions.
        registryRole.addToPolicy(dataStatement(table, { actions: registry.record, on: 'table', partitions: [walletPartitionKey(PRINCIPAL_WALLET)] }));
      }
      for (const grant of registry.reservations) registryRole.addToPolicy(dataStatement(table, grant));
    }
    const tenant = access.tenant;
    if (!tenant) return;
    const tenantRole = walletSessionRole(this, 'TenantRole', role, `Sessions of the ${props.fn} function for one wallet (session tag ${WALLET_TAG})`);
    this.tenantRole = tenantRole;

    if (tenant.data.length) {
      tenantRole.addToPolicy(
        dataStatement(table, { actions: tenant.data, on: 'table', partitions: walletPartitionPatterns(PRINCIPAL_WALLET) }),
      );
    }
    for (const grant of tenant.also ?? []) tenantRole.addToPolicy(dataStatement(table, grant));

    const didcommKeyArn = props.didcommKeyArn;
    if (declaresDataKeys(access) && !didcommKeyArn) throw new Error(`${props.fn} declares dataKeys but was given no DIDComm key`);
    for (const purpose of DATA_KEY_PURPOSES) {
      const actions = tenant.dataKeys?.[purpose] ?? [];
      if (actions.length === 0) continue;
      tenantRole.addToPolicy(
        new iam.PolicyStatement({
          actions: actions.map((a) => `kms:${a}`),
          resources: [didcommKeyArn!],
          // One statement per declared purpose, whose encryption context is exactly {wallet_id: the
          // session's wallet, purpose: this one}: a data key made or unsealed for wallet 42's AnonCreds
          // keys needs {wallet_id: 42, purpose: anoncreds}, which only wallet 42's session of a function
          // declaring that purpose may give. StringEquals requires both keys; ForAllValues admits no third.
          conditions: {
            StringEquals: { [`kms:EncryptionContext:${DATA_KEY_CONTEXT.wallet}`]: PRINCIPAL_WALLET, [`kms:EncryptionContext:${DATA_KEY_CONTEXT.purpose}`]: purpose },
            'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': [DATA_KEY_CONTEXT.wallet, DATA_KEY_CONTEXT.purpose] },
          },
        }),
      );
    }

    const keyActions = tenant.issuerKeys ?? [];
    if (keyActions.length === 0) return;
    const stack = Stack.of(this);
    const issuerKeyArns = stack.formatArn({ service: 'kms', resource: 'key', resourceName: '*' });
    if (keyActions.includes('CreateKey')) {
      tenantRole.addToPolicy(
        new iam.PolicyStatement({
          actions: ['kms:CreateKey'],
          resources: ['*'],
          conditions: {
            StringEquals: {
              [`aws:RequestTag/${SERVICE_TAG}`]: props.issuerKeyTag,
              [`aws:RequestTag/${WALLET_TAG}`]: PRINCIPAL_WALLET,
              'kms:KeyUsage': 'SIGN_VERIFY',
              'kms:KeySpec': ISSUER_KEY_SPECS,
            },
            'ForAllValues:StringEquals': { 'aws:TagKeys': [SERVICE_TAG, WALLET_TAG] },
          },
        }),
      );
      tenantRole.addToPolicy(
        new iam.PolicyStatement({
          // CreateKey's Tags need TagResource: only on a key without a service tag yet (the one being
          // created), only with our two tag keys, and only for the session's own wallet.
          actions: ['kms:TagResource'],
          resources: [issuerKeyArns],
          conditions: {
            StringEquals: { [`aws:RequestTag/${SERVICE_TAG}`]: props.issuerKeyTag, [`aws:RequestTag/${WALLET_TAG}`]: PRINCIPAL_WALLET },
            'ForAllValues:StringEquals': { 'aws:TagKeys': [SERVICE_TAG, WALLET_TAG] },
            Null: { [`aws:ResourceTag/${SERVICE_TAG}`]: 'true' },
          },
        }),
      );
    }
    const ownKey = { [`aws:ResourceTag/${SERVICE_TAG}`]: props.issuerKeyTag, [`aws:ResourceTag/${WALLET_TAG}`]: PRINCIPAL_WALLET };
    const onKeys = keyActions.filter((a) => a !== 'CreateKey' && a !== 'ScheduleKeyDeletion');
    if (onKeys.length) {
      tenantRole.addToPolicy(new iam.PolicyStatement({ actions: onKeys.map((a) => `kms:${a}`), resources: [issuerKeyArns], conditions: { StringEquals: ownKey } }));
    }
    if (keyActions.includes('ScheduleKeyDeletion')) {
      tenantRole.addToPolicy(
        new iam.PolicyStatement({
          // Only with the longest window, the one the code asks for: an operator has 30 days to cancel.
          actions: ['kms:ScheduleKeyDeletion'],
          resources: [issuerKeyArns],
          conditions: { StringEquals: ownKey, NumericEquals: { 'kms:ScheduleKeyDeletionPendingWindowInDays': KEY_DELETION_WINDOW_DAYS } },
        }),
      );
    }
    // Below any Allow, whatever a key policy says: a session touches only keys of its own wallet. A key
    // policy can name any role (CreateKey's Policy has no condition key), so a key created in one
    // wallet's session could otherwise admit another's. A key without a wallet tag is refused too
    // (StringNotEquals holds on an absent key). CreateKey and the TagResource of creation act on a key
    // that has no tags yet; the Allows above bind them.
    //
    // The DIDComm key carries no wallet tag (one key serves every wallet, each through its own
    // encryption context), so for a function that also declares dataKeys the data-key actions leave this
    // Deny for one of their own: denied on every key but the DIDComm key. On the DIDComm key every other
    // action stays denied, and the data-key Allow above holds it to the session's own encryption context.
    const dataKeyDenied = dataKeyActions(access).map((a) => `kms:${a}`);
    tenantRole.addToPolicy(
      new iam.PolicyStatement({
        effect: iam.Effect.DENY,
        notActions: ['kms:CreateKey', 'kms:TagResource', ...dataKeyDenied],
        resources: [issuerKeyArns],
        conditions: { StringNotEquals: { [`aws:ResourceTag/${WALLET_TAG}`]: PRINCIPAL_WALLET } },
      }),
    );
    if (dataKeyDenied.length && props.didcommKeyArn) {
      tenantRole.addToPolicy(new iam.PolicyStatement({ effect: iam.Effect.DENY, actions: dataKeyDenied, notResources: [props.didcommKeyArn] }));
    }
    if (keyActions.includes('CreateKey')) {
      tenantRole.addToPolicy(
        new iam.PolicyStatement({
          effect: iam.Effect.DENY,
          actions: ['kms:CreateKey', 'kms:PutKeyPolicy'],
          resources: ['*'],
          conditions: { Bool: { 'kms:BypassPolicyLockoutSafetyCheck': 'true' } },
        }),
      );
    }
    // cdk-nag names a finding by the resolved resource: concrete when the stack has an account and region.
    const nag = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<${pseudo}>` : value);
    for (const f of [
      { id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]', reason: 'kms:CreateKey has no resource to scope; it is conditioned on the service and wallet tags, key usage and key specs.' },
      {
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:${nag(stack.region, 'AWS::Region')}:${nag(stack.account, 'AWS::AccountId')}:key/*]`,
        reason: "Issuer keys are created at run time; the session reaches only keys tagged with this stack and its own wallet.",
      },
    ]) {
      Validations.of(tenantRole).acknowledge(f);
    }
  }
}

export interface UsageKeysPolicyProps {
  /** The execution role of a function whose declaration has `shared.usageKeys`. */
  readonly role: iam.IRole;
  /** The usage plan wallets' throttling keys join. */
  readonly tenantUsagePlanId: string;
}

/**
 * The declared `usageKeys` grant: find the tenants' plan by its name, create or find a wallet's key, add
 * it to that plan only. A policy of its own in the root stack: the plan depends on the API's stage,
 * which depends on the deployment, which depends on every area's methods — a reference to the plan
 * from inside an area would close that circle.
 */
export class UsageKeysPolicy extends Construct {
  constructor(scope: Construct, id: string, props: UsageKeysPolicyProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const arn = (resource: string) => stack.formatArn({ service: 'apigateway', account: '', resource });
    new iam.Policy(this, 'Policy', {
      roles: [props.role],
      statements: [
        new iam.PolicyStatement({ actions: ['apigateway:GET'], resources: [arn('/usageplans')] }),
        new iam.PolicyStatement({ actions: ['apigateway:POST', 'apigateway:GET'], resources: [arn('/apikeys')] }),
        new iam.PolicyStatement({ actions: ['apigateway:POST'], resources: [arn(`/usageplans/${props.tenantUsagePlanId}/keys`)] }),
      ],
    });
  }
}
