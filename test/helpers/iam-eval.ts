/**
 * A small evaluator of the identity policies in a synthesized template, for the subset of IAM this
 * stack uses: Allow statements, `*` wildcards in actions and resources, the operators StringEquals,
 * StringLike, ForAllValues:StringEquals/StringLike and Null, and the policy variable
 * `${aws:PrincipalTag/…}`. Resources are resolved to concrete ARNs in a fixed partition, region and
 * account. Written from the IAM documentation ("Policy evaluation logic", "Condition operators"),
 * independently of the code under test, so that the declaration and the stack can be compared.
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
}

export class TemplateIam {
  private readonly resources: Record<string, Json>;

  constructor(template: Json) {
    this.resources = template.Resources;
  }

  /** A concrete value for an intrinsic: `Fn::GetAtt [X, Arn]` becomes an ARN naming X by its logical id. */
  resolve(v: Json): string {
    if (typeof v === 'string') return v;
    if (v?.Ref) {
      const pseudo: Record<string, string> = { 'AWS::Partition': PARTITION, 'AWS::Region': REGION, 'AWS::AccountId': ACCOUNT, 'AWS::URLSuffix': 'amazonaws.com' };
      return pseudo[v.Ref] ?? v.Ref;
    }
    if (v?.['Fn::Join']) return (v['Fn::Join'][1] as Json[]).map((p) => this.resolve(p)).join(v['Fn::Join'][0]);
    if (v?.['Fn::GetAtt']) {
      const [id, attr] = v['Fn::GetAtt'] as [string, string];
      const type = this.resources[id]?.Type as string;
      if (attr === 'Arn') {
        if (type === 'AWS::DynamoDB::Table') return `arn:${PARTITION}:dynamodb:${REGION}:${ACCOUNT}:table/${id}`;
        if (type === 'AWS::KMS::Key') return `arn:${PARTITION}:kms:${REGION}:${ACCOUNT}:key/${id}`;
        if (type === 'AWS::SQS::Queue') return `arn:${PARTITION}:sqs:${REGION}:${ACCOUNT}:${id}`;
        if (type === 'AWS::IAM::Role') return `arn:${PARTITION}:iam::${ACCOUNT}:role/${id}`;
        if (type === 'AWS::Lambda::Function') return `arn:${PARTITION}:lambda:${REGION}:${ACCOUNT}:function:${id}`;
      }
      if (attr === 'StreamArn') return `arn:${PARTITION}:dynamodb:${REGION}:${ACCOUNT}:table/${id}/stream/x`;
      return `${id}.${attr}`;
    }
    throw new Error(`cannot resolve ${JSON.stringify(v)}`);
  }

  /** Identity-policy statements attached to a role (by its logical id). */
  statementsOf(roleId: string): Json[] {
    const out: Json[] = [];
    for (const r of Object.values(this.resources)) {
      if (r.Type !== 'AWS::IAM::Policy') continue;
      if (!(r.Properties.Roles as Json[]).some((x) => x.Ref === roleId)) continue;
      out.push(...r.Properties.PolicyDocument.Statement);
    }
    const role = this.resources[roleId];
    for (const p of role?.Properties?.Policies ?? []) out.push(...p.PolicyDocument.Statement);
    return out;
  }

  /** Whether a role's trust policy lets `principalArn` make `action` with these request tags. */
  trusts(roleId: string, principalArn: string, action: string, requestTags: Readonly<Record<string, string>>): boolean {
    const doc = this.resources[roleId].Properties.AssumeRolePolicyDocument;
    const keys: Record<string, string | readonly string[]> = { 'aws:TagKeys': Object.keys(requestTags) };
    for (const [k, v] of Object.entries(requestTags)) keys[`aws:RequestTag/${k}`] = v;
    return (doc.Statement as Json[]).some((s) => {
      if (s.Effect !== 'Allow') return false;
      if (![s.Action].flat().includes(action)) return false;
      if (![s.Principal?.AWS].flat().some((p: Json) => p !== undefined && this.resolve(p) === principalArn)) return false;
      return Object.entries((s.Condition ?? {}) as Record<string, Record<string, Json>>).every(([op, block]) =>
        Object.entries(block).every(([key, expected]) => conditionHolds(op, keys[key], [expected].flat().map(String), {})),
      );
    });
  }

  /** Whether the role's identity policies allow the request (no Deny is used by this stack: asserted). */
  allows(roleId: string, req: RequestContext): boolean {
    const statements = this.statementsOf(roleId);
    if (statements.some((s) => s.Effect !== 'Allow')) throw new Error(`role ${roleId} has a non-Allow statement; extend the evaluator`);
    return statements.some((s) => this.statementMatches(s, req));
  }

  private statementMatches(s: Json, req: RequestContext): boolean {
    const actions = [s.Action].flat() as string[];
    if (!actions.some((a) => like(a.toLowerCase(), req.action.toLowerCase()))) return false;
    const resources = [s.Resource].flat().map((r: Json) => this.resolve(r));
    if (!resources.some((r) => like(r, req.resource))) return false;
    return Object.entries((s.Condition ?? {}) as Record<string, Record<string, Json>>).every(([op, block]) =>
      Object.entries(block).every(([key, expected]) => conditionHolds(op, req.keys[key], [expected].flat().map(String), req.principalTags ?? {})),
    );
  }
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

function conditionHolds(op: string, actual: string | readonly string[] | undefined, expected: string[], tags: Readonly<Record<string, string>>): boolean {
  const patterns = expected.map((e) => substitute(e, tags)).filter((e): e is string => e !== null);
  const matchOne = (operator: string, v: string) => patterns.some((p) => (operator === 'StringLike' ? like(p, v) : p === v));
  if (op === 'Null') return (actual === undefined) === (expected[0] === 'true');
  if (op.startsWith('ForAllValues:')) {
    const values = actual === undefined ? [] : [actual].flat();
    return values.every((v) => matchOne(op.slice('ForAllValues:'.length), v));
  }
  if (op === 'StringEquals' || op === 'StringLike') {
    if (actual === undefined || Array.isArray(actual)) return false;
    return matchOne(op, actual as string);
  }
  throw new Error(`condition operator ${op} is not modelled; extend the evaluator`);
}
