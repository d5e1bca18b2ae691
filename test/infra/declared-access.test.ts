import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServiceApp } from '../../infra/service-app';
import {
  allows,
  DATA_ACTIONS,
  FUNCTION_ACCESS,
  FUNCTION_NAMES,
  DATA_KEY_ACTIONS,
  DATA_KEY_PURPOSES,
  declaresDataKeys,
  ISSUER_KEY_ACTIONS,
  type AccessRequest,
  type FunctionName,
  type Principal,
} from '../../lib/service/access';
import { KEY_DELETION_WINDOW_DAYS } from '../../lib/keys/port';
import { QUEUES, TABLE } from '../../lib/service/resources';
import { resourcesOf, stackTemplates, type StackTemplate } from '../helpers/assembly';
import { SimulatedIam, type Decision } from '../helpers/iam-simulate';
import { ACCOUNT, AssemblyIam, conditionHolds, PARTITION, REGION, type RequestContext, type RoleRef } from '../helpers/iam-eval';

/**
 * The roles the stacks build and the local runtime's access guard decide alike: every probe below is
 * put both to `allows()` (what the guard enforces in `npm test` and `npm start`) and to the IAM
 * policies of the synthesized templates — the root's and every area's nested stack, with the values
 * the root passes into them — (what AWS enforces), and the answers must agree. Synthesized with a
 * concrete account and region, as the CDK CLI does.
 */
const outdir = mkdtempSync(join(tmpdir(), 'cdk-access-'));
let iam: AssemblyIam;
let sim: SimulatedIam;
let stacks: StackTemplate[];
const STACK = 'CredentialService';

beforeAll(() => {
  // No bundling: roles do not depend on the code (test/infra/stack.test.ts synthesizes the bundles).
  const { app, stack } = createServiceApp({ 'aws:cdk:bundling-stacks': [] }, outdir, { CDK_DEFAULT_ACCOUNT: ACCOUNT, CDK_DEFAULT_REGION: REGION });
  const assembly = app.synth(); // cdk-nag throws on any unacknowledged finding
  stacks = stackTemplates(stack, assembly.directory);
  iam = new AssemblyIam(stacks);
  sim = new SimulatedIam(iam);
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

const root = () => stacks[0]!;
const ofType = (type: string, stack?: StackTemplate) => resourcesOf(stack ? [stack] : stacks, type);

function roles(fn: FunctionName): { execution: RoleRef; tenant: RoleRef | null; registry: RoleRef | null } {
  const prefix = `${fn.replace(/-/g, '')}functionFn`;
  const found = ofType('AWS::Lambda::Function').filter(({ id }) => id.startsWith(prefix));
  if (found.length !== 1) throw new Error(`${found.length} functions ${fn}`);
  const { stack, resource } = found[0]!;
  const { TENANT_ROLE_ARN: tenant, REGISTRY_ROLE_ARN: registry } = resource.Properties.Environment.Variables;
  return {
    execution: { stack, id: resource.Properties.Role['Fn::GetAtt'][0] },
    tenant: tenant ? { stack, id: tenant['Fn::GetAtt'][0] } : null,
    registry: registry ? { stack, id: registry['Fn::GetAtt'][0] } : null,
  };
}

/** The role a principal's calls are made with: the execution role, or its tenant or registry role's session. */
function roleOf(p: Principal): RoleRef | null {
  const r = roles(p.fn);
  return p.wallet === null ? r.execution : p.registry ? r.registry : r.tenant;
}

const roleArn = (role: RoleRef) => iam.arnOf(role.stack, role.id);
const tableArn = () => iam.arnOf(root(), ofType('AWS::DynamoDB::Table', root())[0]!.id);
const macKeyArn = () => iam.arnOf(root(), ofType('AWS::KMS::Key', root()).find(({ resource }) => resource.Properties.KeySpec === 'HMAC_256')!.id);
const didcommKeyArn = () => iam.arnOf(root(), ofType('AWS::KMS::Key', root()).find(({ resource }) => String(resource.Properties.Description ?? '').includes('DIDComm'))!.id);
const queueArn = (q: string) => iam.arnOf(root(), ofType('AWS::SQS::Queue', root()).find(({ id }) => id.startsWith(`${q.replace(/-/g, '')}queue`))!.id);
const tenantPlanId = () => iam.refOf(root(), ofType('AWS::ApiGateway::UsagePlan', root()).find(({ resource }) => resource.Properties.UsagePlanName.endsWith('-tenants'))!.id);

/** The IAM request (or requests: CreateKey with tags also needs TagResource) AWS would authorize. */
function iamRequests(r: AccessRequest): RequestContext[] {
  switch (r.service) {
    case 'dynamodb':
      return [{ action: `dynamodb:${r.action}`, resource: r.on === 'table' ? tableArn() : `${tableArn()}/index/${r.on}`, keys: { 'dynamodb:LeadingKeys': [r.partition] } }];
    case 'kms-mac':
      return [{ action: 'kms:GenerateMac', resource: macKeyArn(), keys: {} }];
    case 'sqs':
      return [{ action: 'sqs:SendMessage', resource: queueArn(r.queue), keys: {} }];
    case 'ses':
      return [{ action: 'ses:SendRawEmail', resource: `arn:${PARTITION}:ses:${REGION}:${ACCOUNT}:identity/example.invalid`, keys: { 'ses:FromAddress': 'credentials@example.invalid' } }];
    case 'usage-keys':
      return [
        { action: 'apigateway:GET', resource: `arn:${PARTITION}:apigateway:${REGION}::/usageplans`, keys: {} },
        { action: 'apigateway:POST', resource: `arn:${PARTITION}:apigateway:${REGION}::/apikeys`, keys: {} },
        { action: 'apigateway:POST', resource: `arn:${PARTITION}:apigateway:${REGION}::/usageplans/${tenantPlanId()}/keys`, keys: {} },
      ];
    case 'kms-data-key':
      // The stack's DIDComm key, with the encryption context the adapter sends ({wallet_id, purpose}).
      return [{ action: `kms:${r.action}`, resource: didcommKeyArn(), keys: { 'kms:EncryptionContext:wallet_id': r.contextWallet, 'kms:EncryptionContext:purpose': r.purpose, 'kms:EncryptionContextKeys': ['wallet_id', 'purpose'] } }];
    case 'kms': {
      const keyArn = `arn:${PARTITION}:kms:${REGION}:${ACCOUNT}:key/1234abcd-0000-0000-0000-000000000000`;
      if (r.action === 'CreateKey') {
        const tags = { 'aws:RequestTag/service': STACK, 'aws:RequestTag/wallet_id': r.keyWallet, 'aws:TagKeys': ['service', 'wallet_id'] };
        return [
          { action: 'kms:CreateKey', resource: '*', keys: { ...tags, 'kms:KeySpec': 'ECC_NIST_P256', 'kms:KeyUsage': 'SIGN_VERIFY' } },
          { action: 'kms:TagResource', resource: keyArn, keys: tags },
        ];
      }
      const window: Record<string, string> = r.action === 'ScheduleKeyDeletion' ? { 'kms:ScheduleKeyDeletionPendingWindowInDays': String(KEY_DELETION_WINDOW_DAYS) } : {};
      return [{ action: `kms:${r.action}`, resource: keyArn, keys: { 'aws:ResourceTag/service': STACK, 'aws:ResourceTag/wallet_id': r.keyWallet, ...window } }];
    }
  }
}

const PARTITIONS = ['W#42', 'W#42#SL#7', 'W#420', 'W#4', 'W#43', 'W#43#x', 'SYS#COUNTER', 'SYS#WNAME#acme', 'SYS#PUBREF#Aa0_Bb1-Cc2Dd3Ee4Ff5Gg', 'SYS#PUBREF#~', 'SYS#ADMIN', 'SYS#WALLETS', 'AK#ab', 'DID#did:key:z6Mk'];

function probes(): AccessRequest[] {
  const out: AccessRequest[] = [];
  for (const action of DATA_ACTIONS) {
    for (const on of ['table', TABLE.gsi1.name, TABLE.publicDids.name] as const) {
      for (const partition of PARTITIONS) out.push({ service: 'dynamodb', action, on, partition });
    }
  }
  for (const action of ISSUER_KEY_ACTIONS) for (const keyWallet of ['42', '43']) out.push({ service: 'kms', action, keyWallet });
  // A wallet-43 session must not unseal wallet 42's data keys (nor make one in its name), nor any session a purpose its function does not declare.
  for (const action of DATA_KEY_ACTIONS) {
    for (const contextWallet of ['42', '43']) for (const purpose of DATA_KEY_PURPOSES) out.push({ service: 'kms-data-key', action, contextWallet, purpose });
  }
  out.push({ service: 'kms-mac' }, { service: 'usage-keys' }, ...QUEUES.map((q) => ({ service: 'sqs' as const, queue: q.id })));
  return out;
}

/** What AWS decides for the principal: its execution role, or its tenant role's session tagged with the wallet. */
function awsAllows(p: Principal, r: AccessRequest): boolean {
  const role = roleOf(p);
  if (!role) return false;
  return iamRequests(r).every((q) => iam.allows(role, p.wallet === null ? q : { ...q, principalTags: { wallet_id: p.wallet } }));
}

/**
 * The second opinion on the same requests: allowed only if the simulator allows every one. A request
 * the simulator rejects as invalid (an action on a resource type it does not take) is collected: the
 * test expects none, so every probe is really evaluated.
 */
async function simulatedAllows(p: Principal, r: AccessRequest, invalid: string[]): Promise<boolean> {
  const role = roleOf(p);
  if (!role) return false;
  for (const q of iamRequests(r)) {
    const d = await sim.decide(role, p.wallet === null ? q : { ...q, principalTags: { wallet_id: p.wallet } });
    if (typeof d !== 'string') invalid.push(`${q.action} on ${q.resource}: ${d.error}`);
    if (d !== 'allowed') return false;
  }
  return true;
}

describe('every role is what its declaration says (lib/service/access.ts)', () => {
  test.each(FUNCTION_NAMES)('%s: IAM (two evaluators) and the local access guard agree on every probe, for its own role, a wallet session and a registry session', async (fn) => {
    const disagreements: string[] = [];
    const invalid: string[] = [];
    let allowed = 0;
    const principals: Principal[] = [{ fn, wallet: null }, { fn, wallet: '42' }, { fn, wallet: '42', registry: true }];
    for (const p of principals) {
      const who = p.wallet === null ? 'own role' : p.registry ? `registry ${p.wallet}` : p.wallet;
      for (const r of probes()) {
        const local = allows(p, r);
        if (local) allowed++;
        if (local !== awsAllows(p, r)) disagreements.push(`${who} ${JSON.stringify(r)}: local ${local}, IAM ${!local}`);
        if (local !== (await simulatedAllows(p, r, invalid))) disagreements.push(`${who} ${JSON.stringify(r)}: local ${local}, simulator ${!local}`);
      }
    }
    expect(disagreements).toEqual([]);
    expect(invalid).toEqual([]);
    // A function that may do nothing at all is only the public API description.
    if (fn !== 'meta') expect(allowed).toBeGreaterThan(0);
  });

  test('only the function itself may start a session of its tenant or registry role, only tagged with a wallet, only with that tag', () => {
    let registries = 0;
    for (const fn of FUNCTION_NAMES) {
      const { execution, tenant, registry } = roles(fn);
      expect(registry !== null).toBe(FUNCTION_ACCESS[fn].registry !== undefined);
      for (const sessionRole of [tenant, registry]) {
        if (!sessionRole) continue;
        if (sessionRole === registry) registries++;
        const own = roleArn(execution);
        const other = roleArn(roles(fn === 'dids' ? 'webhooks' : 'dids').execution);
        const arn = roleArn(sessionRole);
        expect(iam.allows(execution, { action: 'sts:AssumeRole', resource: arn, keys: {} })).toBe(true);
        expect(iam.allows(execution, { action: 'sts:TagSession', resource: arn, keys: {} })).toBe(true);
        expect(iam.trusts(sessionRole, own, 'sts:AssumeRole', { wallet_id: '42' })).toBe(true);
        expect(iam.trusts(sessionRole, own, 'sts:TagSession', { wallet_id: '42' })).toBe(true);
        expect(iam.trusts(sessionRole, own, 'sts:AssumeRole', {})).toBe(false);
        expect(iam.trusts(sessionRole, own, 'sts:TagSession', { wallet_id: '42', role: 'admin' })).toBe(false);
        expect(iam.trusts(sessionRole, other, 'sts:AssumeRole', { wallet_id: '42' })).toBe(false);
      }
      // No other function's execution role may start a registry session.
      for (const other of FUNCTION_NAMES) {
        const theirs = roles(other).registry;
        if (other === fn || !theirs) continue;
        expect(iam.allows(execution, { action: 'sts:AssumeRole', resource: roleArn(theirs), keys: {} })).toBe(false);
      }
    }
    expect(registries).toBe(1);
  });

  test("a wallet session's issuer keys are this stack's, SIGN_VERIFY, Ed25519 or P-256 only", () => {
    const { tenant } = roles('dids');
    const keyArn = `arn:${PARTITION}:kms:${REGION}:${ACCOUNT}:key/abcd`;
    const create = (keys: Record<string, string | string[]>) =>
      iam.allows(tenant!, {
        action: 'kms:CreateKey',
        resource: '*',
        keys: { 'aws:RequestTag/service': STACK, 'aws:RequestTag/wallet_id': '42', 'aws:TagKeys': ['service', 'wallet_id'], 'kms:KeySpec': 'ECC_NIST_EDWARDS25519', 'kms:KeyUsage': 'SIGN_VERIFY', ...keys },
        principalTags: { wallet_id: '42' },
      });
    expect(create({})).toBe(true);
    expect(create({ 'kms:KeySpec': 'RSA_2048' })).toBe(false);
    expect(create({ 'kms:KeyUsage': 'ENCRYPT_DECRYPT' })).toBe(false);
    expect(create({ 'aws:RequestTag/service': 'OtherStack' })).toBe(false);
    expect(create({ 'aws:TagKeys': ['service', 'wallet_id', 'owner'] })).toBe(false);
    // An existing key (it has a service tag) cannot be re-tagged to the session's wallet.
    const retag = iam.allows(tenant!, {
      action: 'kms:TagResource',
      resource: keyArn,
      keys: { 'aws:RequestTag/service': STACK, 'aws:RequestTag/wallet_id': '42', 'aws:TagKeys': ['service', 'wallet_id'], 'aws:ResourceTag/service': STACK },
      principalTags: { wallet_id: '42' },
    });
    expect(retag).toBe(false);
    // Another stack's key tagged with the same wallet id is out of reach.
    expect(iam.allows(tenant!, { action: 'kms:GetPublicKey', resource: keyArn, keys: { 'aws:ResourceTag/service': 'Other', 'aws:ResourceTag/wallet_id': '42' }, principalTags: { wallet_id: '42' } })).toBe(false);
  });

  test('the evaluator can say no: a probe outside every declaration is refused by both', () => {
    const r: AccessRequest = { service: 'dynamodb', action: 'DeleteItem', on: 'table', partition: 'SYS#ADMIN' };
    for (const fn of FUNCTION_NAMES) {
      expect(allows({ fn, wallet: null }, r)).toBe(false);
      expect(awsAllows({ fn, wallet: null }, r)).toBe(false);
    }
  });
});

/** Every role of every function, with the session tags it would run under (a wallet session for tenant and registry roles). */
function everyPrincipalRole(): { fn: FunctionName; role: RoleRef; principalTags: Record<string, string> }[] {
  return FUNCTION_NAMES.flatMap((fn) => {
    const { execution, tenant, registry } = roles(fn);
    const sessions = [tenant, registry].filter((r): r is RoleRef => r !== null).map((role) => ({ fn, role, principalTags: { wallet_id: '42' } }));
    return [{ fn, role: execution, principalTags: {} as Record<string, string> }, ...sessions];
  });
}

/** The evaluator's decision, after checking that the simulator decides the same. */
async function decideBoth(role: RoleRef, req: RequestContext): Promise<Decision> {
  const own = iam.decide(role, req);
  expect({ req, decision: await sim.decide(role, req) }).toEqual({ req, decision: own });
  return own;
}
const allowsBoth = async (role: RoleRef, req: RequestContext) => (await decideBoth(role, req)) === 'allowed';

describe('what the declaration does not say, pinned (issue 27)', () => {
  test('the evaluator models ForAllValues on an absent key as IAM does: it holds (the reason for Null)', async () => {
    expect(conditionHolds('ForAllValues:StringLike', undefined, ['W#42'], {})).toBe(true);
    expect(conditionHolds('Null', undefined, ['false'], {})).toBe(false);
    expect(conditionHolds('StringNotEquals', undefined, ['42'], {})).toBe(true);
  });

  test('a table request without a partition key, or with any partition outside the grant, is refused to every role', async () => {
    const table = tableArn();
    let allowedWithKey = 0;
    for (const { role, principalTags } of everyPrincipalRole()) {
      for (const action of DATA_ACTIONS) {
        const ask = async (keys: RequestContext['keys']) => await allowsBoth(role, { action: `dynamodb:${action}`, resource: table, keys, principalTags });
        // A Scan, or a future index grant on the table ARN: no LeadingKeys at all.
        expect(await ask({})).toBe(false);
        expect(await allowsBoth(role, { action: 'dynamodb:Scan', resource: table, keys: {}, principalTags })).toBe(false);
        if (principalTags.wallet_id) {
          expect(await ask({ 'dynamodb:LeadingKeys': ['W#42', 'W#43'] })).toBe(false);
          expect(await ask({ 'dynamodb:LeadingKeys': ['W#43', 'W#42#x'] })).toBe(false);
          if (await ask({ 'dynamodb:LeadingKeys': ['W#42', 'W#42#x'] })) allowedWithKey++;
        }
      }
    }
    expect(allowedWithKey).toBeGreaterThan(0);
    // Every statement that reads LeadingKeys also requires it.
    for (const { role } of everyPrincipalRole()) {
      for (const { statement } of iam.statementsOf(role)) {
        const uses = Object.values(statement.Condition ?? {}).some((block: any) => 'dynamodb:LeadingKeys' in block);
        if (uses) expect(statement.Condition.Null).toEqual({ 'dynamodb:LeadingKeys': 'false' });
      }
    }
  });

  test("a wallet session's own partitions are pinned literally: W#<wallet> and W#<wallet>#*, nothing wider", async () => {
    // Written out here, not derived from walletPartitionPatterns(): the comparison above builds both
    // sides from that function, so it could not notice a wrong pattern (say `W#<wallet>*`, which reaches W#420).
    const literal = {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['W#${aws:PrincipalTag/wallet_id}', 'W#${aws:PrincipalTag/wallet_id}#*'] },
      Null: { 'dynamodb:LeadingKeys': 'false' },
    };
    let checked = 0;
    for (const fn of FUNCTION_NAMES) {
      const tenantAccess = FUNCTION_ACCESS[fn].tenant;
      const { tenant } = roles(fn);
      if (!tenantAccess) continue;
      const own = iam.policyDocument(tenant!).Statement.filter(
        (s) => s.Resource === tableArn() && [s.Action].flat().sort().join() === tenantAccess.data.map((a) => `dynamodb:${a}`).sort().join(),
      );
      expect({ fn, conditions: own.map((s) => s.Condition) }).toEqual({ fn, conditions: [literal] });
      // And exercised: a neighbouring wallet whose id extends this one's is outside.
      for (const partition of ['W#420', 'W#4', 'W#42x', 'W#43#42']) {
        expect({ fn, partition, allowed: await allowsBoth(tenant!, { action: `dynamodb:${tenantAccess.data[0]}`, resource: tableArn(), keys: { 'dynamodb:LeadingKeys': [partition] }, principalTags: { wallet_id: '42' } }) }).toEqual({ fn, partition, allowed: false });
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(5);
  });

  test("every KMS key of the stack carries the service tag, so no session can tag it as a wallet's", async () => {
    const keys = ofType('AWS::KMS::Key');
    expect(keys.length).toBeGreaterThanOrEqual(2); // the HMAC key and the alarm topic's
    const { tenant } = roles('dids');
    for (const { stack, id, resource } of keys) {
      const tags = Object.fromEntries((resource.Properties.Tags ?? []).map((t: { Key: string; Value: string }) => [t.Key, t.Value]));
      expect(tags.service).toEqual(expect.any(String));
      expect(tags.service).not.toBe(STACK); // not an issuer key's value
      const keyArn = iam.arnOf(stack, id);
      const resourceTags = { 'aws:ResourceTag/service': tags.service };
      const take = await allowsBoth(tenant!, {
        action: 'kms:TagResource',
        resource: keyArn,
        keys: { 'aws:RequestTag/service': STACK, 'aws:RequestTag/wallet_id': '42', 'aws:TagKeys': ['service', 'wallet_id'], ...resourceTags },
        principalTags: { wallet_id: '42' },
      });
      expect(take).toBe(false);
      for (const action of ['kms:ScheduleKeyDeletion', 'kms:GenerateMac', 'kms:Sign', 'kms:DisableKey', 'kms:PutKeyPolicy']) {
        expect(await decideBoth(tenant!, { action, resource: keyArn, keys: { ...resourceTags, 'kms:ScheduleKeyDeletionPendingWindowInDays': '30' }, principalTags: { wallet_id: '42' } })).toBe('explicit-deny');
      }
    }
    // The one key TagResource can take is a key with no service tag: the one CreateKey is making.
    const fresh = `arn:${PARTITION}:kms:${REGION}:${ACCOUNT}:key/new`;
    const tagFresh = async (keys: RequestContext['keys']) =>
      await allowsBoth(tenant!, { action: 'kms:TagResource', resource: fresh, keys: { 'aws:RequestTag/service': STACK, 'aws:RequestTag/wallet_id': '42', 'aws:TagKeys': ['service', 'wallet_id'], ...keys }, principalTags: { wallet_id: '42' } });
    expect(await tagFresh({})).toBe(true);
    expect(await tagFresh({ 'aws:ResourceTag/service': STACK })).toBe(false);
    expect(await tagFresh({ 'aws:RequestTag/wallet_id': '43' })).toBe(false);
  });

  test('a key is scheduled for deletion only with the 30-day window the code asks for', async () => {
    const { tenant } = roles('dids');
    const keyArn = `arn:${PARTITION}:kms:${REGION}:${ACCOUNT}:key/own`;
    const schedule = async (days: string | undefined) =>
      await allowsBoth(tenant!, {
        action: 'kms:ScheduleKeyDeletion',
        resource: keyArn,
        keys: { 'aws:ResourceTag/service': STACK, 'aws:ResourceTag/wallet_id': '42', ...(days === undefined ? {} : { 'kms:ScheduleKeyDeletionPendingWindowInDays': days }) },
        principalTags: { wallet_id: '42' },
      });
    expect(KEY_DELETION_WINDOW_DAYS).toBe(30);
    expect(await schedule('30')).toBe(true);
    expect(await schedule('7')).toBe(false);
    expect(await schedule('29')).toBe(false);
    expect(await schedule(undefined)).toBe(false);
  });

  test("a wallet-43 session cannot use a wallet-42 key, even when the key's policy names its role; its own keys stay usable", async () => {
    const keyArn = `arn:${PARTITION}:kms:${REGION}:${ACCOUNT}:key/of-42`;
    let checked = 0;
    for (const fn of FUNCTION_NAMES) {
      const { tenant } = roles(fn);
      const actions = FUNCTION_ACCESS[fn].tenant?.issuerKeys?.filter((a) => a !== 'CreateKey') ?? [];
      if (!tenant || actions.length === 0) continue;
      // What a key created with a hostile Policy would say: any principal may use it.
      const keyPolicy = { Statement: [{ Effect: 'Allow', Principal: { AWS: [roleArn(tenant), '*'] }, Action: 'kms:*', Resource: '*' }] };
      for (const a of actions) {
        const keys = { 'aws:ResourceTag/service': STACK, 'aws:ResourceTag/wallet_id': '42', 'kms:ScheduleKeyDeletionPendingWindowInDays': '30' };
        expect(await decideBoth(tenant, { action: `kms:${a}`, resource: keyArn, keys, principalTags: { wallet_id: '43' }, resourcePolicy: keyPolicy })).toBe('explicit-deny');
        expect(await decideBoth(tenant, { action: `kms:${a}`, resource: keyArn, keys, principalTags: { wallet_id: '42' } })).toBe('allowed');
        // A key with no wallet tag is no session's.
        expect(await decideBoth(tenant, { action: `kms:${a}`, resource: keyArn, keys: { 'aws:ResourceTag/service': STACK }, principalTags: { wallet_id: '42' }, resourcePolicy: keyPolicy })).toBe('explicit-deny');
        checked++;
      }
      // Without the Deny, the hostile key policy alone lets the other wallet's session sign: the Deny is what refuses it.
      const crossWallet = { action: `kms:${actions[0]}`, resource: keyArn, keys: { 'aws:ResourceTag/service': STACK, 'aws:ResourceTag/wallet_id': '42', 'kms:ScheduleKeyDeletionPendingWindowInDays': '30' }, principalTags: { wallet_id: '43' }, resourcePolicy: keyPolicy };
      expect(await sim.decide(tenant, crossWallet, { withoutDenies: true })).toBe('allowed');
    }
    expect(checked).toBeGreaterThan(0);
  });

  test("a function declaring both issuer keys and a data key (DIDComm or AnonCreds) uses its own wallet's of each, and neither of another wallet's", async () => {
    const both = FUNCTION_NAMES.filter((fn) => (FUNCTION_ACCESS[fn].tenant?.issuerKeys?.length ?? 0) > 0 && declaresDataKeys(FUNCTION_ACCESS[fn]));
    expect(both).toEqual(expect.arrayContaining(['dids', 'credential-issuer']));
    const issuerKey = `arn:${PARTITION}:kms:${REGION}:${ACCOUNT}:key/issuer-of-42`;
    const ownTags = { 'aws:ResourceTag/service': STACK, 'aws:ResourceTag/wallet_id': '42', 'kms:ScheduleKeyDeletionPendingWindowInDays': '30' };
    for (const fn of both) {
      const { tenant } = roles(fn);
      const access = FUNCTION_ACCESS[fn].tenant!;
      const purpose = DATA_KEY_PURPOSES.find((p) => (access.dataKeys?.[p] ?? []).length > 0)!;
      const context = (wallet: string) => ({ 'kms:EncryptionContext:wallet_id': wallet, 'kms:EncryptionContext:purpose': purpose, 'kms:EncryptionContextKeys': ['wallet_id', 'purpose'] });
      for (const a of access.issuerKeys!.filter((x) => x !== 'CreateKey')) {
        expect({ fn, a, own: await decideBoth(tenant!, { action: `kms:${a}`, resource: issuerKey, keys: ownTags, principalTags: { wallet_id: '42' } }) }).toEqual({ fn, a, own: 'allowed' });
        expect({ fn, a, other: await decideBoth(tenant!, { action: `kms:${a}`, resource: issuerKey, keys: ownTags, principalTags: { wallet_id: '43' } }) }).toEqual({ fn, a, other: 'explicit-deny' });
      }
      for (const a of access.dataKeys![purpose]!) {
        const onDidcommKey = (wallet: string, contextWallet: string) => decideBoth(tenant!, { action: `kms:${a}`, resource: didcommKeyArn(), keys: context(contextWallet), principalTags: { wallet_id: wallet } });
        expect({ fn, a, own: await onDidcommKey('42', '42') }).toEqual({ fn, a, own: 'allowed' });
        expect({ fn, a, other: await onDidcommKey('43', '42') }).toEqual({ fn, a, other: 'implicit-deny' });
        // Nor without an encryption context, or with a second key in it.
        expect(await allowsBoth(tenant!, { action: `kms:${a}`, resource: didcommKeyArn(), keys: {}, principalTags: { wallet_id: '42' } })).toBe(false);
        expect(await allowsBoth(tenant!, { action: `kms:${a}`, resource: didcommKeyArn(), keys: { ...context('42'), 'kms:EncryptionContextKeys': ['wallet_id', 'purpose', 'x'] }, principalTags: { wallet_id: '42' } })).toBe(false);
        // The data-key actions reach no other key, not even the wallet's own issuer key.
        expect({ fn, a, issuer: await decideBoth(tenant!, { action: `kms:${a}`, resource: issuerKey, keys: { ...ownTags, ...context('42') }, principalTags: { wallet_id: '42' } }) }).toEqual({ fn, a, issuer: 'explicit-deny' });
      }
      // Nothing else may be done with the DIDComm key (it carries no wallet tag: the issuer-key Deny covers it).
      for (const a of ['kms:Sign', 'kms:Encrypt', 'kms:ReEncryptFrom', 'kms:ScheduleKeyDeletion', 'kms:PutKeyPolicy']) {
        expect({ fn, a, decision: await decideBoth(tenant!, { action: a, resource: didcommKeyArn(), keys: context('42'), principalTags: { wallet_id: '42' } }) }).toEqual({ fn, a, decision: 'explicit-deny' });
      }
    }
  });

  test("data keys per purpose, pinned literally on the issuing worker: Decrypt of its own wallet's AnonCreds key, nothing of its DIDComm key", async () => {
    // Written out here, not derived from DATA_KEY_CONTEXT or the declaration: a wrong key name or a
    // missing purpose condition would be built into both sides of the comparisons above alike.
    const { tenant } = roles('credential-issuer');
    const onDataKey = iam.policyDocument(tenant!).Statement.filter((st) => st.Effect === 'Allow' && [st.Resource].flat().includes(didcommKeyArn()));
    expect(onDataKey.map((st) => ({ Action: st.Action, Condition: st.Condition }))).toEqual([
      {
        Action: 'kms:Decrypt',
        Condition: {
          StringEquals: { 'kms:EncryptionContext:wallet_id': '${aws:PrincipalTag/wallet_id}', 'kms:EncryptionContext:purpose': 'anoncreds' },
          'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['wallet_id', 'purpose'] },
        },
      },
    ]);
    // And exercised with both evaluators.
    const ask = (action: string, keys: RequestContext['keys'], wallet = '42') => decideBoth(tenant!, { action, resource: didcommKeyArn(), keys, principalTags: { wallet_id: wallet } });
    const ctx = (wallet: string, purpose?: string, extra: string[] = []) => ({
      'kms:EncryptionContext:wallet_id': wallet,
      ...(purpose === undefined ? {} : { 'kms:EncryptionContext:purpose': purpose }),
      'kms:EncryptionContextKeys': ['wallet_id', ...(purpose === undefined ? [] : ['purpose']), ...extra],
    });
    expect(await ask('kms:Decrypt', ctx('42', 'anoncreds'))).toBe('allowed');
    expect(await ask('kms:Decrypt', ctx('42', 'didcomm'))).toBe('implicit-deny'); // its own wallet's DIDComm key
    expect(await ask('kms:Decrypt', ctx('42'))).toBe('implicit-deny'); // the context before purposes: {wallet_id} alone
    expect(await ask('kms:Decrypt', ctx('42', 'anoncreds', ['x']))).toBe('implicit-deny'); // a third key
    expect(await ask('kms:Decrypt', ctx('42', 'Anoncreds'))).toBe('implicit-deny'); // values compare exactly
    expect(await ask('kms:Decrypt', ctx('42', 'anoncreds'), '43')).toBe('implicit-deny'); // another wallet's
    // Unseals, never makes: GenerateDataKey is not declared, so the issuer-key Deny (every action but the declared ones, on keys not tagged with the wallet) refuses it.
    expect(await ask('kms:GenerateDataKey', ctx('42', 'anoncreds'))).toBe('explicit-deny');
  });

  test('data keys per purpose: each function reaches exactly the purposes it declares, for its own wallet only', async () => {
    const ctx = (wallet: string, purpose: string) => ({ 'kms:EncryptionContext:wallet_id': wallet, 'kms:EncryptionContext:purpose': purpose, 'kms:EncryptionContextKeys': ['wallet_id', 'purpose'] });
    // What the code uses (lib/didcomm/key-vault.ts for didcomm, lib/anoncreds/sealed-keys.ts for anoncreds), written out.
    const expected: Partial<Record<FunctionName, Record<string, string[]>>> = {
      dids: { didcomm: ['kms:GenerateDataKey', 'kms:Decrypt'] },
      didcomm: { didcomm: ['kms:GenerateDataKey', 'kms:Decrypt'] },
      'didcomm-worker': { didcomm: ['kms:GenerateDataKey', 'kms:Decrypt'] },
      'didcomm-outbound': { didcomm: ['kms:Decrypt'] },
      jsonld: { didcomm: ['kms:GenerateDataKey', 'kms:Decrypt'] },
      anoncreds: { didcomm: ['kms:GenerateDataKey', 'kms:Decrypt'], anoncreds: ['kms:Decrypt'] },
      'anoncreds-worker': { anoncreds: ['kms:GenerateDataKey', 'kms:Decrypt'] },
      'credential-issuer': { anoncreds: ['kms:Decrypt'] },
    };
    for (const fn of FUNCTION_NAMES) {
      const { execution, tenant } = roles(fn);
      const got: Record<string, string[]> = {};
      for (const purpose of ['didcomm', 'anoncreds']) {
        for (const a of ['kms:GenerateDataKey', 'kms:Decrypt']) {
          if (tenant && (await allowsBoth(tenant, { action: a, resource: didcommKeyArn(), keys: ctx('42', purpose), principalTags: { wallet_id: '42' } }))) (got[purpose] ??= []).push(a);
          if (tenant) expect({ fn, purpose, a, other: await allowsBoth(tenant, { action: a, resource: didcommKeyArn(), keys: ctx('42', purpose), principalTags: { wallet_id: '43' } }) }).toEqual({ fn, purpose, a, other: false });
          // Outside a wallet's session (the function's own role), no data key at all.
          expect({ fn, purpose, a, own: await allowsBoth(execution, { action: a, resource: didcommKeyArn(), keys: ctx('42', purpose) }) }).toEqual({ fn, purpose, a, own: false });
        }
      }
      expect({ fn, got }).toEqual({ fn, got: expected[fn] ?? {} });
    }
  });

  test("AnonCreds: the public function holds no key at all", async () => {
    const context = (wallet: string, purpose: string) => ({ 'kms:EncryptionContext:wallet_id': wallet, 'kms:EncryptionContext:purpose': purpose, 'kms:EncryptionContextKeys': ['wallet_id', 'purpose'] });
    for (const fn of ['anoncreds-public'] as const) {
      const { execution, tenant } = roles(fn);
      for (const role of [execution, tenant!]) {
        for (const purpose of ['didcomm', 'anoncreds']) {
          for (const a of ['kms:GenerateDataKey', 'kms:Decrypt', 'kms:Sign']) {
            expect({ fn, a, purpose, allowed: await allowsBoth(role, { action: a, resource: didcommKeyArn(), keys: context('42', purpose), principalTags: { wallet_id: '42' } }) }).toEqual({ fn, a, purpose, allowed: false });
          }
        }
      }
    }
    // The public function's own role finds a DID through the PublicDids index and reads nothing else of the table.
    const pub = roles('anoncreds-public').execution;
    expect(await allowsBoth(pub, { action: 'dynamodb:Query', resource: `${tableArn()}/index/${TABLE.publicDids.name}`, keys: {} })).toBe(true);
    for (const partition of ['W#42', 'SYS#PUBREF#x', 'SYS#ADMIN']) {
      expect({ partition, get: await allowsBoth(pub, { action: 'dynamodb:GetItem', resource: tableArn(), keys: { 'dynamodb:LeadingKeys': [partition] } }) }).toEqual({ partition, get: false });
    }
  });

  test("no wallet session of any function may write a name reservation or a reference lookup; tenancy's registry session may put only those and its wallet's record", async () => {
    const table = tableArn();
    const RESERVATIONS = ['SYS#WNAME#x', 'SYS#PUBREF#x'];
    const item = (action: string, partitions: string[], wallet = '7'): RequestContext => ({ action: `dynamodb:${action}`, resource: table, keys: { 'dynamodb:LeadingKeys': partitions }, principalTags: { wallet_id: wallet } });
    let tenantRoles = 0;
    for (const fn of FUNCTION_NAMES) {
      const { tenant } = roles(fn);
      if (!tenant) continue;
      tenantRoles++;
      for (const partition of RESERVATIONS) {
        for (const action of ['PutItem', 'DeleteItem', 'UpdateItem'] as const) {
          expect({ fn, action, partition, local: allows({ fn, wallet: '7' }, { service: 'dynamodb', action, on: 'table', partition }) }).toEqual({ fn, action, partition, local: false });
          expect(await decideBoth(tenant, item(action, [partition]))).toBe('implicit-deny');
        }
        expect(await decideBoth(tenant, item('BatchWriteItem', [partition]))).toBe('implicit-deny');
      }
    }
    expect(tenantRoles).toBe(FUNCTION_NAMES.filter((fn) => FUNCTION_ACCESS[fn].tenant).length);

    const { registry } = roles('tenancy');
    const granted = new Set(['PutItem SYS#WNAME#x', 'PutItem SYS#PUBREF#x', 'PutItem W#7']);
    const seen = new Set<string>();
    for (const action of [...DATA_ACTIONS, 'BatchWriteItem', 'Scan']) {
      for (const partition of [...RESERVATIONS, 'W#7', 'W#7#x', 'W#70', 'W#8', 'SYS#COUNTER', 'SYS#ADMIN', 'SYS#WALLETS']) {
        const probe = `${action} ${partition}`;
        const expected = granted.has(probe);
        if (expected) seen.add(probe);
        expect({ probe, aws: await allowsBoth(registry!, item(action, [partition])) }).toEqual({ probe, aws: expected });
        if ((DATA_ACTIONS as readonly string[]).includes(action)) {
          const local = allows({ fn: 'tenancy', wallet: '7', registry: true }, { service: 'dynamodb', action: action as (typeof DATA_ACTIONS)[number], on: 'table', partition });
          expect({ probe, local }).toEqual({ probe, local: expected });
        }
      }
    }
    expect(seen).toEqual(granted);
    // Another wallet's record, even beside a reservation, and a session without a wallet tag: refused.
    expect(await allowsBoth(registry!, item('PutItem', ['SYS#WNAME#x', 'W#8']))).toBe(false);
    expect(await allowsBoth(registry!, { action: 'dynamodb:PutItem', resource: table, keys: { 'dynamodb:LeadingKeys': ['W#7'] } })).toBe(false);
    // The index, issuer keys and the MAC key are not the registry session's.
    expect(await allowsBoth(registry!, { action: 'dynamodb:Query', resource: `${table}/index/${TABLE.gsi1.name}`, keys: {}, principalTags: { wallet_id: '7' } })).toBe(false);
    expect(await allowsBoth(registry!, { action: 'kms:GenerateMac', resource: macKeyArn(), keys: {}, principalTags: { wallet_id: '7' } })).toBe(false);
  });

  test('no session may create a key or set a key policy bypassing the lockout safety check', async () => {
    const { tenant } = roles('dids');
    const keys = { 'aws:RequestTag/service': STACK, 'aws:RequestTag/wallet_id': '42', 'aws:TagKeys': ['service', 'wallet_id'], 'kms:KeySpec': 'ECC_NIST_P256', 'kms:KeyUsage': 'SIGN_VERIFY' };
    expect(await decideBoth(tenant!, { action: 'kms:CreateKey', resource: '*', keys: { ...keys, 'kms:BypassPolicyLockoutSafetyCheck': 'false' }, principalTags: { wallet_id: '42' } })).toBe('allowed');
    expect(await decideBoth(tenant!, { action: 'kms:CreateKey', resource: '*', keys: { ...keys, 'kms:BypassPolicyLockoutSafetyCheck': 'true' }, principalTags: { wallet_id: '42' } })).toBe('explicit-deny');
  });
});
