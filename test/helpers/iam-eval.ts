import type { StackTemplate } from './assembly';

/**
 * A small evaluator of the identity policies in a synthesized assembly (the root template and its
 * nested stacks' templates), for the subset of IAM this service uses: `*` wildcards
 * in actions and resources, Allow and Deny (explicit Deny wins), Action and NotAction, Resource and NotResource, a resource policy
 * naming the role, the operators StringEquals, StringNotEquals, StringLike, ForAllValues:StringEquals/StringLike,
 * Null, Bool and NumericEquals, and the policy variable `${aws:PrincipalTag/…}`. Values are resolved across templates as
 * CloudFormation does: a nested stack's parameter is what its parent passes, a parent's
 * `Fn::GetAtt [NestedStack, Outputs.X]` is the nested template's output. Resources are resolved to
 * concrete ARNs in a fixed partition, region and account, named by their template and logical id.
 * Written from the IAM and CloudFormation documentation ("Policy evaluation logic", "Condition
 * operators", "AWS::CloudFormation::Stack"), independently of the code under test, so that the
 * declaration and the stacks can be compared.
 */
export const PARTITION = 'aws';
export const REGION = 'eu-central-1';
export const ACCOUNT = '123456789012';

type Json = any;

export interface RequestContext {
  readonly action: string;
  readonly resource: string;
  /** Condition keys of the request; multi-valued keys as arrays. */
  readonly keys: Readonly<Record<string, string | readonly string[]>>;
  readonly principalTags?: Readonly<Record<string, string>>;
  /** The resource's own policy (a KMS key policy), when it has one. */
  readonly resourcePolicy?: { readonly Statement: readonly Json[] };
}

/** A role: its template and logical id. */
export interface RoleRef {
  readonly stack: StackTemplate;
  readonly id: string;
}

export class AssemblyIam {
  constructor(private readonly stacks: readonly StackTemplate[]) {}

  /** What `Ref` of a resource gives: a name unique in the assembly (its template's path and its logical id). */
  refOf(stack: StackTemplate, id: string): string {
    if (!(id in stack.template.Resources)) throw new Error(`no resource ${id} in ${stack.path}`);
    return `${stack.path.replace(/\//g, '.')}.${id}`;
  }

  /** What `Fn::GetAtt [id, Arn]` gives. */
  arnOf(stack: StackTemplate, id: string): string {
    const name = this.refOf(stack, id);
    const type = stack.template.Resources[id].Type as string;
    switch (type) {
      case 'AWS::DynamoDB::Table':
        return `arn:${PARTITION}:dynamodb:${REGION}:${ACCOUNT}:table/${name}`;
      case 'AWS::KMS::Key':
        return `arn:${PARTITION}:kms:${REGION}:${ACCOUNT}:key/${name}`;
      case 'AWS::SQS::Queue':
        return `arn:${PARTITION}:sqs:${REGION}:${ACCOUNT}:${name}`;
      case 'AWS::IAM::Role':
        return `arn:${PARTITION}:iam::${ACCOUNT}:role/${name}`;
      case 'AWS::Lambda::Function':
        return `arn:${PARTITION}:lambda:${REGION}:${ACCOUNT}:function:${name}`;
      default:
        return `${name}.Arn`; // no policy of this service names it: any unique value will do
    }
  }

  /** A concrete value for an intrinsic, as CloudFormation would resolve it in `stack`. */
  resolve(stack: StackTemplate, v: Json): string {
    if (typeof v === 'string') return v;
    if (v?.Ref !== undefined) {
      const pseudo: Record<string, string> = { 'AWS::Partition': PARTITION, 'AWS::Region': REGION, 'AWS::AccountId': ACCOUNT, 'AWS::URLSuffix': 'amazonaws.com' };
      if (pseudo[v.Ref]) return pseudo[v.Ref]!;
      if (stack.template.Parameters?.[v.Ref] !== undefined) {
        if (!stack.parent) throw new Error(`parameter ${v.Ref} of the root template has no value here`);
        const passed = stack.parent.stack.template.Resources[stack.parent.resourceId].Properties.Parameters?.[v.Ref];
        if (passed === undefined) throw new Error(`${stack.parent.stack.path} passes no ${v.Ref} to ${stack.path}`);
        return this.resolve(stack.parent.stack, passed);
      }
      return this.refOf(stack, v.Ref);
    }
    if (v?.['Fn::Join']) return (v['Fn::Join'][1] as Json[]).map((p) => this.resolve(stack, p)).join(v['Fn::Join'][0]);
    if (v?.['Fn::GetAtt']) {
      const [id, attr] = v['Fn::GetAtt'] as [string, string];
      const resource = stack.template.Resources[id];
      if (resource?.Type === 'AWS::CloudFormation::Stack' && attr.startsWith('Outputs.')) {
        const child = this.stacks.find((s) => s.parent?.stack === stack && s.parent.resourceId === id);
        const output = child?.template.Outputs?.[attr.slice('Outputs.'.length)];
        if (!child || !output) throw new Error(`${stack.path}: no output ${attr} of ${id}`);
        return this.resolve(child, output.Value);
      }
      if (attr === 'Arn') return this.arnOf(stack, id);
      if (attr === 'StreamArn') return `${this.arnOf(stack, id)}/stream/x`;
      return `${this.refOf(stack, id)}.${attr}`;
    }
    throw new Error(`cannot resolve ${JSON.stringify(v)}`);
  }

  /** Identity-policy statements attached to a role, from any template of the assembly. */
  statementsOf(role: RoleRef): Json[] {
    const name = this.refOf(role.stack, role.id);
    const out: Json[] = [];
    for (const stack of this.stacks) {
      for (const r of Object.values(stack.template.Resources as Record<string, Json>)) {
        if (r.Type !== 'AWS::IAM::Policy') continue;
        if (!(r.Properties.Roles as Json[]).some((x) => this.resolve(stack, x) === name)) continue;
        out.push(...r.Properties.PolicyDocument.Statement.map((s: Json) => ({ stack, statement: s })));
      }
    }
    for (const p of role.stack.template.Resources[role.id]?.Properties?.Policies ?? []) out.push(...p.PolicyDocument.Statement.map((s: Json) => ({ stack: role.stack, statement: s })));
    return out;
  }

  /**
   * The role's identity policies as one policy document with every intrinsic resolved (policy variables
   * such as `${aws:PrincipalTag/…}` kept): what a second, independent simulator is given.
   */
  policyDocument(role: RoleRef): { Version: string; Statement: Json[] } {
    const resolveDeep = (stack: StackTemplate, v: Json): Json =>
      Array.isArray(v) ? v.map((x) => resolveDeep(stack, x)) : typeof v === 'object' && v !== null ? this.resolve(stack, v) : v;
    const Statement = this.statementsOf(role).map(({ stack, statement }) => {
      const out: Json = { ...statement };
      if (statement.Resource !== undefined) out.Resource = resolveDeep(stack, statement.Resource);
      if (statement.NotResource !== undefined) out.NotResource = resolveDeep(stack, statement.NotResource);
      if (statement.Condition) {
        out.Condition = Object.fromEntries(
          Object.entries(statement.Condition as Record<string, Record<string, Json>>).map(([op, block]) => [op, Object.fromEntries(Object.entries(block).map(([k, v]) => [k, resolveDeep(stack, v)]))]),
        );
      }
      return out;
    });
    return { Version: '2012-10-17', Statement };
  }

  /** Whether a role's trust policy lets `principalArn` make `action` with these request tags. */
  trusts(role: RoleRef, principalArn: string, action: string, requestTags: Readonly<Record<string, string>>): boolean {
    const doc = role.stack.template.Resources[role.id].Properties.AssumeRolePolicyDocument;
    const keys: Record<string, string | readonly string[]> = { 'aws:TagKeys': Object.keys(requestTags) };
    for (const [k, v] of Object.entries(requestTags)) keys[`aws:RequestTag/${k}`] = v;
    return (doc.Statement as Json[]).some((s) => {
      if (s.Effect !== 'Allow') return false;
      if (![s.Action].flat().includes(action)) return false;
      if (![s.Principal?.AWS].flat().some((p: Json) => p !== undefined && this.resolve(role.stack, p) === principalArn)) return false;
      return Object.entries((s.Condition ?? {}) as Record<string, Record<string, Json>>).every(([op, block]) =>
        Object.entries(block).every(([key, expected]) => conditionHolds(op, keys[key], [expected].flat().map(String), {})),
      );
    });
  }

  /**
   * Whether the role's session may make the request: no identity-policy Deny matches, and an identity
   * policy or the resource's own policy (a KMS key policy naming the role) allows it.
   */
  allows(role: RoleRef, req: RequestContext): boolean {
    return this.decide(role, req) === 'allowed';
  }

  /** IAM's three outcomes: an explicit Deny wins over any Allow; no Allow is an implicit deny. */
  decide(role: RoleRef, req: RequestContext): 'allowed' | 'explicit-deny' | 'implicit-deny' {
    const statements = this.statementsOf(role);
    for (const { statement } of statements) if (statement.Effect !== 'Allow' && statement.Effect !== 'Deny') throw new Error(`role ${role.id}: effect ${statement.Effect}`);
    if (statements.some(({ stack, statement }) => statement.Effect === 'Deny' && this.statementMatches(stack, statement, req))) return 'explicit-deny';
    if (statements.some(({ stack, statement }) => statement.Effect === 'Allow' && this.statementMatches(stack, statement, req))) return 'allowed';
    const arn = this.arnOf(role.stack, role.id);
    const byResource = (req.resourcePolicy?.Statement ?? []).some(
      (s: Json) => s.Effect === 'Allow' && [s.Principal?.AWS].flat().some((p: Json) => p === '*' || p === arn) && matchesActionResourceConditions(s, req, (v) => String(v)),
    );
    return byResource ? 'allowed' : 'implicit-deny';
  }

  private statementMatches(stack: StackTemplate, s: Json, req: RequestContext): boolean {
    return matchesActionResourceConditions(s, req, (v) => this.resolve(stack, v));
  }
}

function matchesActionResourceConditions(s: Json, req: RequestContext, resolve: (v: Json) => string): boolean {
  const actionIn = (list: Json) => ([list].flat() as string[]).some((a) => like(a.toLowerCase(), req.action.toLowerCase()));
  if (s.NotAction !== undefined ? actionIn(s.NotAction) : !actionIn(s.Action)) return false;
  if (s.NotResource !== undefined) {
    // NotResource: every resource but those listed.
    if ([s.NotResource].flat().some((r: Json) => like(resolve(r), req.resource))) return false;
  } else if (![s.Resource].flat().some((r: Json) => like(resolve(r), req.resource))) return false;
  return Object.entries((s.Condition ?? {}) as Record<string, Record<string, Json>>).every(([op, block]) =>
    Object.entries(block).every(([key, expected]) => conditionHolds(op, req.keys[key], [expected].flat().map((e) => (typeof e === 'object' ? resolve(e) : String(e))), req.principalTags ?? {})),
  );
}

/** IAM StringLike: `*` any run, `?` one character. */
export function like(pattern: string, value: string): boolean {
  const re = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${re}$`, 's').test(value);
}

/** `${aws:PrincipalTag/x}` replaced by the session's tag; an absent tag makes the value unmatchable. */
function substitute(value: string, tags: Readonly<Record<string, string>>): string | null {
  let missing = false;
  const out = value.replace(/\$\{aws:PrincipalTag\/([^}]+)\}/g, (_m, tag: string) => {
    if (tags[tag] === undefined) missing = true;
    return tags[tag] ?? '';
  });
  return missing ? null : out;
}

/**
 * One condition operator on one key. Absent keys as IAM documents them: ForAllValues holds (no value
 * fails it), negated operators (StringNotEquals) hold, every other operator fails.
 */
export function conditionHolds(op: string, actual: string | readonly string[] | undefined, expected: string[], tags: Readonly<Record<string, string>>): boolean {
  const patterns = expected.map((e) => substitute(e, tags)).filter((e): e is string => e !== null);
  const matchOne = (operator: string, v: string) => patterns.some((p) => (operator === 'StringLike' ? like(p, v) : p === v));
  if (op === 'Null') return (actual === undefined) === (expected[0] === 'true');
  if (op.startsWith('ForAllValues:')) {
    const values = actual === undefined ? [] : [actual].flat();
    return values.every((v) => matchOne(op.slice('ForAllValues:'.length), v));
  }
  if (op === 'StringNotEquals') {
    if (actual === undefined) return true;
    return [actual].flat().every((v) => !matchOne('StringEquals', v));
  }
  if (actual === undefined || Array.isArray(actual)) return false;
  const value = actual as string;
  switch (op) {
    case 'StringEquals':
    case 'StringLike':
      return matchOne(op, value);
    case 'Bool':
      return patterns.some((p) => p.toLowerCase() === value.toLowerCase());
    case 'NumericEquals':
      return patterns.some((p) => Number(p) === Number(value) && value.trim() !== '');
    default:
      throw new Error(`condition operator ${op} is not modelled; extend the evaluator`);
  }
}
