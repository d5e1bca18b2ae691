import { runSimulation } from '@cloud-copilot/iam-simulate';
import { ACCOUNT, type AssemblyIam, type RequestContext, type RoleRef } from './iam-eval';

/**
 * The second opinion: the same role and request put to `@cloud-copilot/iam-simulate`, an IAM policy
 * simulator kept by others (its own condition operators, policy variables, explicit-deny and KMS
 * key-policy rules), given the role's identity policies as `test/helpers/iam-eval.ts` resolves them
 * from the assembly. KMS keys get the default key policy (the account may use IAM policies) unless the
 * request brings its own.
 */
export type Decision = 'allowed' | 'explicit-deny' | 'implicit-deny';

const DEFAULT_KEY_POLICY = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${ACCOUNT}:root` }, Action: 'kms:*', Resource: '*' }] };

export class SimulatedIam {
  private readonly documents = new Map<string, unknown>();
  constructor(private readonly iam: AssemblyIam) {}

  private document(role: RoleRef) {
    const key = this.iam.refOf(role.stack, role.id);
    let doc = this.documents.get(key);
    if (!doc) this.documents.set(key, (doc = this.iam.policyDocument(role)));
    return doc;
  }

  /** The simulator's decision, or its validation error (e.g. a resource type the action does not take). */
  async decide(role: RoleRef, req: RequestContext, opts: { withoutDenies?: boolean } = {}): Promise<Decision | { error: string }> {
    const roleName = this.iam.refOf(role.stack, role.id);
    const contextVariables: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.keys)) contextVariables[asSimulated(k)] = typeof v === 'string' ? v : [...v];
    for (const [k, v] of Object.entries(req.principalTags ?? {})) contextVariables[`aws:PrincipalTag/${k}`] = v;
    const isKey = req.action.startsWith('kms:') && req.resource.includes(':key/');
    const resourcePolicy = req.resourcePolicy ? { Version: '2012-10-17', ...req.resourcePolicy } : isKey ? DEFAULT_KEY_POLICY : undefined;
    const out = await runSimulation(
      {
        request: {
          principal: `arn:aws:sts::${ACCOUNT}:assumed-role/${roleName}/session`,
          action: req.action,
          resource: { resource: req.resource, accountId: ACCOUNT },
          contextVariables,
        },
        identityPolicies: [{ name: 'role', policy: withSimulatedKeys(opts.withoutDenies ? withoutDenies(this.document(role)) : this.document(role)) }],
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        ...(resourcePolicy ? { resourcePolicy } : {}),
      },
      { simulationMode: 'Strict' },
    );
    if (out.resultType === 'error') return { error: out.errors.message };
    return out.overallResult === 'Allowed' ? 'allowed' : out.overallResult === 'ExplicitlyDenied' ? 'explicit-deny' : 'implicit-deny';
  }
}

/** The same policy with its Deny statements left out: what a probe shows the Deny is for. */
function withoutDenies(doc: any) {
  return { ...doc, Statement: doc.Statement.filter((st: { Effect: string }) => st.Effect !== 'Deny') };
}

/**
 * The simulator (0.1.173) drops a request's `kms:EncryptionContext:<key>` as unknown: it matches
 * variable condition keys only when they are `/`-separated (`aws:ResourceTag/<key>`), and this one is
 * `:`-separated. So both the request and the policies name it, for the simulator only, under a
 * `/`-separated key it does evaluate for KMS key operations, with the same string operators; no real
 * resource tag has that name (tag keys on our keys are `service` and `wallet_id`).
 */
const ENCRYPTION_CONTEXT = /^kms:EncryptionContext:/i;
const asSimulated = (key: string) => (ENCRYPTION_CONTEXT.test(key) ? `aws:ResourceTag/${key}` : key);

function withSimulatedKeys(doc: any) {
  const statements = (doc.Statement as any[]).map((st) => {
    if (!st.Condition) return st;
    const Condition = Object.fromEntries(
      Object.entries(st.Condition as Record<string, Record<string, unknown>>).map(([op, keys]) => [op, Object.fromEntries(Object.entries(keys).map(([k, v]) => [asSimulated(k), v]))]),
    );
    return { ...st, Condition };
  });
  return { ...doc, Statement: statements };
}
