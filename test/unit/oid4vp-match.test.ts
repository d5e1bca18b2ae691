import { describe, expect, it } from '@jest/globals';
import { refusal } from '../helpers/presentation-refusal';
import { DcqlQuery } from 'dcql';
import { locateSubmission, matchDcql, matchDcqlForDefinition, matchDefinition, type PresentationDefinition } from '../../lib/oid4vp/query';
import { type VerifiedCredential } from '../../lib/oid4vp/verification/types';

/*
 * What a verifier expects of the matching (OpenID4VP 1.0 §6 DCQL, DIF Presentation Exchange v2), beyond
 * oid4vp-query.test.ts: one presentation per query unless `multiple`, holder binding unless waived,
 * credential_sets and claim_sets as §6.4 reads them, a definition's formats, and where a
 * presentation_submission may point.
 */

const PID = 'urn:eudi:pid:1';

const pid = (over: Partial<VerifiedCredential> = {}): VerifiedCredential => ({
  format: 'dc+sd-jwt',
  issuer: 'https://issuer.example',
  vct: PID,
  claims: { iss: 'https://issuer.example', vct: PID, given_name: 'Erika', family_name: 'Mustermann', age_over_18: true },
  disclosedPaths: [['given_name']],
  holderBound: true,
  issuerTrust: 'own_did',
  ...over,
});

const degree = (over: Partial<VerifiedCredential> = {}): VerifiedCredential => {
  const vc = { type: ['VerifiableCredential', 'UniversityDegreeCredential'], credentialSubject: { id: 'did:example:holder', degree: 'BSc' } };
  return {
    format: 'jwt_vc_json',
    issuer: 'did:example:issuer',
    types: vc.type,
    claims: { iss: 'did:example:issuer', sub: 'did:example:holder', vc },
    disclosedPaths: [],
    holderBound: true,
    issuerTrust: 'trusted_issuers_setting',
    ...over,
  };
};


const pidQuery = (over: Record<string, unknown> = {}) =>
  DcqlQuery.parse({ credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [PID] }, claims: [{ path: ['given_name'] }], ...over }] } as never);

describe('matchDcql: one credential query', () => {
  it('takes one presentation per query unless the query allows multiple (§6.1 multiple)', () => {
    const two = { pid: [pid(), pid({ claims: { ...pid().claims, given_name: 'Max' } })] };
    expect(refusal(() => matchDcql(pidQuery(), two, { strict: true }))).toMatchObject({ reason: 'invalid_submission', credentialId: 'pid' });
    expect(refusal(() => matchDcql(pidQuery(), two, { strict: true })).detail).toContain('2 presentations');
    expect(matchDcql(pidQuery({ multiple: true }), two, { strict: true }).pid).toMatchObject({ issuer: 'https://issuer.example', vct: PID });
    // An empty list is no answer at all.
    expect(refusal(() => matchDcql(pidQuery(), { pid: [] }, { strict: true }))).toMatchObject({ reason: 'missing_credential', credentialId: 'pid' });
  });

  it('requires holder binding by default, of every presentation; a query may waive it (§6.1 require_cryptographic_holder_binding)', () => {
    const unbound = pid({ holderBound: false });
    expect(refusal(() => matchDcql(pidQuery({ multiple: true }), { pid: [pid(), unbound] }, { strict: true })).reason).toBe('missing_key_binding');
    expect(refusal(() => matchDcql(pidQuery({ require_cryptographic_holder_binding: true }), { pid: [unbound] }, { strict: true })).reason).toBe('missing_key_binding');
    expect(matchDcql(pidQuery({ require_cryptographic_holder_binding: false }), { pid: [unbound] }, { strict: true }).pid).toBeDefined();
  });

  it('under strict, checks every presentation of a multiple query, not only the first', () => {
    const extra = pid({ disclosedPaths: [['given_name'], ['family_name']] });
    const e = refusal(() => matchDcql(pidQuery({ multiple: true }), { pid: [pid(), extra] }, { strict: true }));
    expect(e).toMatchObject({ reason: 'extra_disclosure', credentialId: 'pid' });
    expect(e.detail).toBe("credential query 'pid': disclosed /family_name, which the query did not request");
  });

  it('names every extra disclosure, and allows the parent of a requested claim and elements inside it', () => {
    const q = pidQuery({ claims: [{ path: ['address', 'street_address'] }, { path: ['nationalities', null] }] });
    const claims = { ...pid().claims, address: { street_address: 'Heidestraße 17', locality: 'Köln' }, nationalities: ['DE'] };
    const ok = pid({ claims, disclosedPaths: [['address'], ['address', 'street_address'], ['nationalities'], ['nationalities', 0]] });
    expect(matchDcql(q, { pid: [ok] }, { strict: true }).pid!.disclosed).toEqual(['/address', '/address/street_address', '/nationalities', '/nationalities/0']);
    const extras = pid({ claims, disclosedPaths: [['address'], ['address', 'street_address'], ['address', 'locality'], ['nationalities', 0], ['given_name']] });
    expect(refusal(() => matchDcql(q, { pid: [extras] }, { strict: true })).detail).toContain('disclosed /address/locality, /given_name, which');
    // null selects array elements, never a member of an object.
    const named = pid({ claims: { ...claims, nationalities: { x: 'DE' } }, disclosedPaths: [['nationalities', 'x']] });
    expect(refusal(() => matchDcql(q, { pid: [named] }, { strict: true })).reason).toBe('constraints_not_met');
  });

  it('decides strictness per credential query when given a function', () => {
    const q = DcqlQuery.parse({
      credentials: [
        { id: 'a', format: 'dc+sd-jwt', meta: { vct_values: [PID] }, claims: [{ path: ['given_name'] }] },
        { id: 'b', format: 'dc+sd-jwt', meta: { vct_values: [PID] }, claims: [{ path: ['given_name'] }] },
      ],
    });
    const extra = pid({ disclosedPaths: [['given_name'], ['family_name']] });
    const strictOnA = { strict: (id: string) => id === 'a' };
    expect(Object.keys(matchDcql(q, { a: [pid()], b: [extra] }, strictOnA))).toEqual(['a', 'b']);
    expect(refusal(() => matchDcql(q, { a: [extra], b: [pid()] }, strictOnA))).toMatchObject({ reason: 'extra_disclosure', credentialId: 'a' });
  });

  it('reads the vct from the claims when the verifier did not set it, and an SD-JWT without vct answers no vct query', () => {
    expect(matchDcql(pidQuery(), { pid: [pid({ vct: undefined })] }, { strict: true }).pid).not.toHaveProperty('vct');
    const { vct: _, ...noVct } = pid().claims;
    const e = refusal(() => matchDcql(pidQuery(), { pid: [pid({ vct: undefined, claims: noVct })] }, { strict: true }));
    expect(e).toMatchObject({ reason: 'constraints_not_met', credentialId: 'pid' });
    expect(e.detail).toMatch(/^credential query 'pid': /);
  });

  it('reports a failing claim value in the detail (values)', () => {
    const q = pidQuery({ claims: [{ path: ['age_over_18'], values: [true] }] });
    const under = pid({ claims: { ...pid().claims, age_over_18: false }, disclosedPaths: [['age_over_18']] });
    const e = refusal(() => matchDcql(q, { pid: [under] }, { strict: true }));
    expect(e.reason).toBe('constraints_not_met');
    expect(e.detail).not.toBe("credential query 'pid': not satisfied");
    expect(e.detail).toMatch(/^credential query 'pid': .+/);
  });
});

describe('matchDcql: W3C credentials', () => {
  const degreeQuery = (claims: unknown[] = [{ path: ['credentialSubject', 'degree'] }]) =>
    DcqlQuery.parse({ credentials: [{ id: 'degree', format: 'jwt_vc_json', meta: { type_values: [['UniversityDegreeCredential']] }, claims }] } as never);

  it('takes the types from vc.type when the verifier did not set them', () => {
    expect(matchDcql(degreeQuery(), { degree: [degree({ types: undefined })] }, { strict: true }).degree).not.toHaveProperty('types');
    const claims = { ...degree().claims, vc: { ...(degree().claims.vc as object), type: ['VerifiableCredential'] } };
    expect(refusal(() => matchDcql(degreeQuery(), { degree: [degree({ types: undefined, claims })] }, { strict: true })).reason).toBe('constraints_not_met');
    // Non-string entries of vc.type are no types.
    const odd = { ...degree().claims, vc: { ...(degree().claims.vc as object), type: [7, 'UniversityDegreeCredential'] } };
    expect(matchDcql(degreeQuery(), { degree: [degree({ types: undefined, claims: odd })] }, { strict: true }).degree).toBeDefined();
  });

  it('reads claim paths from the VC; without a vc object, from the JWT claims themselves', () => {
    const flat = degree({ claims: { iss: 'did:example:issuer', type: ['VerifiableCredential', 'UniversityDegreeCredential'], credentialSubject: { degree: 'BSc' } }, types: undefined });
    expect(matchDcql(degreeQuery(), { degree: [flat] }, { strict: true }).degree).toBeDefined();
    // A claim outside vc is still seen (the JWT's own claims stay beside the VC's).
    expect(matchDcql(degreeQuery([{ path: ['sub'] }]), { degree: [degree()] }, { strict: true }).degree).toBeDefined();
  });
});

describe('matchDcql: credential_sets (§6.2)', () => {
  const q = DcqlQuery.parse({
    credentials: [
      { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [PID] }, claims: [{ path: ['given_name'] }] },
      { id: 'mdl', format: 'dc+sd-jwt', meta: { vct_values: ['urn:mdl'] }, claims: [{ path: ['given_name'] }] },
      { id: 'degree', format: 'jwt_vc_json', meta: { type_values: [['UniversityDegreeCredential']] } },
    ],
    credential_sets: [{ options: [['pid'], ['mdl']] }, { options: [['degree']], required: false }],
  });
  const mdl = pid({ vct: 'urn:mdl', claims: { ...pid().claims, vct: 'urn:mdl' } });

  it('is satisfied by any one option of each required set', () => {
    expect(Object.keys(matchDcql(q, { mdl: [mdl] }, { strict: true }))).toEqual(['mdl']);
    expect(Object.keys(matchDcql(q, { pid: [pid()], degree: [degree()] }, { strict: true }))).toEqual(['pid', 'degree']);
  });

  it('refuses a required set no option of which was presented, naming the set, its options and the first missing query', () => {
    const e = refusal(() => matchDcql(q, { degree: [degree()] }, { strict: true }));
    expect(e).toMatchObject({ reason: 'missing_credential', credentialId: 'pid' });
    expect(e.detail).toBe('credential_sets[0] is not satisfied: none of its options ([pid] | [mdl]) was presented');
  });

  it('refuses a presented credential that fails its query even when its set is optional', () => {
    const wrong = degree({ types: ['VerifiableCredential'] });
    expect(refusal(() => matchDcql(q, { pid: [pid()], degree: [wrong] }, { strict: true }))).toMatchObject({ reason: 'constraints_not_met', credentialId: 'degree' });
  });

  it('names the first unanswered query when there are no credential_sets', () => {
    const plain = DcqlQuery.parse({
      credentials: [
        { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [PID] }, claims: [{ path: ['given_name'] }] },
        { id: 'degree', format: 'jwt_vc_json', meta: { type_values: [['UniversityDegreeCredential']] } },
      ],
    });
    const e = refusal(() => matchDcql(plain, { pid: [pid()] }, { strict: true }));
    expect(e).toMatchObject({ reason: 'missing_credential', credentialId: 'degree' });
    expect(e.detail).toBe("credential query 'degree' was not answered");
  });
});

describe('matchDcql: claim_sets under strict (§6.4: only the claims of the chosen set)', () => {
  const q = pidQuery({
    claims: [
      { id: 'given', path: ['given_name'] },
      { id: 'family', path: ['family_name'] },
      { id: 'adult', path: ['age_over_18'] },
    ],
    claim_sets: [['given', 'family'], ['adult']],
  });

  it('accepts the disclosures of either set', () => {
    expect(matchDcql(q, { pid: [pid({ disclosedPaths: [['given_name'], ['family_name']] })] }, { strict: true }).pid).toBeDefined();
    expect(matchDcql(q, { pid: [pid({ disclosedPaths: [['age_over_18']] })] }, { strict: true }).pid).toBeDefined();
  });

  it('refuses disclosures that no single set covers, naming the fewest extras', () => {
    const e = refusal(() => matchDcql(q, { pid: [pid({ disclosedPaths: [['given_name'], ['family_name'], ['age_over_18']] })] }, { strict: true }));
    expect(e.reason).toBe('extra_disclosure');
    expect(e.detail).toBe("credential query 'pid': disclosed /age_over_18, which the query did not request");
  });
});

const definition = (over: Record<string, unknown> = {}): PresentationDefinition =>
  ({
    id: 'req',
    input_descriptors: [
      {
        id: 'pid',
        format: { 'dc+sd-jwt': {} },
        constraints: { fields: [{ path: ['$.vct'], filter: { type: 'string', const: PID } }, { id: 'gn', path: ['$.given_name'] }], ...over },
      },
    ],
  }) as PresentationDefinition;

describe('matchDefinition', () => {
  it('names a failing field by name, else id, else its index', () => {
    const { given_name: _, ...claims } = pid().claims;
    expect(refusal(() => matchDefinition(definition(), { pid: pid({ claims }) })).detail).toBe("input descriptor 'pid', field gn: $.given_name is absent");
    const unnamed = definition();
    delete (unnamed.input_descriptors[0]!.constraints.fields![1] as { id?: string }).id;
    expect(refusal(() => matchDefinition(unnamed, { pid: pid({ claims }) })).detail).toBe("input descriptor 'pid', field 1: $.given_name is absent");
  });

  it('reports every path a field tried, and a path that does not parse', () => {
    const d = definition();
    d.input_descriptors[0]!.constraints.fields![1] = { path: ['$.first_name', '$..given_name', '$.given_name'], filter: { type: 'string', const: 'Max' } } as never;
    const detail = refusal(() => matchDefinition(d, { pid: pid() })).detail;
    expect(detail).toMatch(/^input descriptor 'pid', field 1: \$\.first_name is absent; \$\.\.given_name .+; \$\.given_name fails its filter \(.+\)$/);
  });

  it('allows any format when neither the descriptor nor the definition names one', () => {
    const d = definition();
    delete (d.input_descriptors[0] as { format?: unknown }).format;
    expect(matchDefinition(d, { pid: pid() }).pid).toBeDefined();
    expect(matchDefinition({ ...d, format: { jwt_vc_json: {} } } as PresentationDefinition, { pid: degree({ claims: { ...degree().claims, vct: PID, given_name: 'E' } }) }).pid).toBeDefined();
    const e = refusal(() => matchDefinition({ ...d, format: { jwt_vc_json: {} } } as PresentationDefinition, { pid: pid() }));
    expect(e).toMatchObject({ reason: 'unsupported_format', credentialId: 'pid' });
    expect(e.detail).toBe("input descriptor 'pid' does not allow dc+sd-jwt (allowed: jwt_vc_json)");
  });

  it('under limit_disclosure required, allows disclosures on the way to a field or inside it, names the others', () => {
    const d = definition({ limit_disclosure: 'required' });
    d.input_descriptors[0]!.constraints.fields!.push({ path: ['$.address.street'] } as never);
    const claims = { ...pid().claims, address: { street: 'x', locality: 'y' } };
    expect(matchDefinition(d, { pid: pid({ claims, disclosedPaths: [['given_name'], ['address'], ['address', 'street']] }) }).pid).toBeDefined();
    const e = refusal(() => matchDefinition(d, { pid: pid({ claims, disclosedPaths: [['given_name'], ['address', 'locality'], ['family_name']] }) }));
    expect(e.detail).toBe("input descriptor 'pid' has limit_disclosure required, but /address/locality, /family_name was disclosed beyond its fields");
    // An optional field that is absent requests nothing.
    const opt = definition({ limit_disclosure: 'required' });
    opt.input_descriptors[0]!.constraints.fields!.push({ path: ['$.family_name'], optional: true, filter: { type: 'string', const: 'Other' } } as never);
    expect(refusal(() => matchDefinition(opt, { pid: pid({ disclosedPaths: [['given_name'], ['family_name']] }) })).reason).toBe('extra_disclosure');
  });

  it('keeps what the presentation record needs of each credential', () => {
    expect(matchDefinition(definition(), { pid: pid() })).toEqual({
      pid: { format: 'dc+sd-jwt', issuer: 'https://issuer.example', vct: PID, claims: pid().claims, disclosed: ['/given_name'], issuer_trust: 'own_did' },
    });
  });
});

describe('matchDcqlForDefinition', () => {
  it('applies strictness only to descriptors with limit_disclosure required', () => {
    const q = pidQuery();
    const extra = pid({ disclosedPaths: [['given_name'], ['family_name']] });
    expect(matchDcqlForDefinition(definition(), q, { pid: [extra] }).pid).toBeDefined();
    expect(refusal(() => matchDcqlForDefinition(definition({ limit_disclosure: 'required' }), q, { pid: [extra] })).reason).toBe('extra_disclosure');
  });
});

describe('locateSubmission', () => {
  const sub = (descriptor_map: unknown, definition_id = 'req') => ({ id: 's', definition_id, descriptor_map });
  const degreeDef = { id: 'req', input_descriptors: [{ id: 'degree', format: { jwt_vp_json: {}, jwt_vc_json: {} }, constraints: {} }] } as unknown as PresentationDefinition;
  const vpJwt = (payload: unknown) => ['eyJhbGciOiJFUzI1NiJ9', Buffer.from(JSON.stringify(payload)).toString('base64url'), 'sig'].join('.');
  const nestedEntry = (path_nested: Record<string, unknown>, format = 'jwt_vp_json') => ({ id: 'degree', format, path: '$', path_nested });

  it.each([
    ['a submission that is no object', 'x', 'presentation_submission must be a JSON object'],
    ['a descriptor_map that is no array', sub({}), 'descriptor_map must be a non-empty array'],
    ['an entry that is no object', sub(['pid']), 'descriptor_map[0] must be an object'],
    // null is no object either: refused as such, not read (a TypeError would be a 500).
    ['a submission that is null', null, 'presentation_submission must be a JSON object'],
    ['an entry that is null', sub([null]), 'descriptor_map[0] must be an object'],
    ['a descriptor mapped twice', sub([{ id: 'pid', format: 'dc+sd-jwt', path: '$' }, { id: 'pid', format: 'dc+sd-jwt', path: '$' }]), "descriptor_map[1]: input descriptor 'pid' is mapped more than once"],
    ['an unknown format', sub([{ id: 'pid', format: 'ldp_vc', path: '$' }]), 'descriptor_map[0].format "ldp_vc" is not a supported format'],
    ['a format that is no string', sub([{ id: 'pid', format: 7, path: '$' }]), 'descriptor_map[0].format 7 is not a supported format'],
    ['a path that is no string', sub([{ id: 'pid', format: 'dc+sd-jwt', path: 0 }]), 'descriptor_map[0].path 0 must be'],
  ])('refuses %s', (_, submission, detail) => {
    const e = refusal(() => locateSubmission(definition(), submission, ['t']));
    expect(e.reason).toBe('invalid_submission');
    expect(e.detail).toContain(detail);
  });

  it('refuses an empty vp_token', () => {
    expect(refusal(() => locateSubmission(definition(), sub([{ id: 'pid', format: 'dc+sd-jwt', path: '$' }]), [])).detail).toBe('the vp_token is empty');
  });

  it('accepts $[i] with one token, and a descriptor without formats takes any', () => {
    expect(locateSubmission(definition(), sub([{ id: 'pid', format: 'dc+sd-jwt', path: '$[0]' }]), ['t'])).toEqual([{ descriptorId: 'pid', format: 'dc+sd-jwt', tokenIndex: 0 }]);
    const any = { id: 'req', input_descriptors: [{ id: 'pid', constraints: {} }] } as unknown as PresentationDefinition;
    expect(locateSubmission(any, sub([{ id: 'pid', format: 'jwt_vc_json', path: '$' }]), ['t'])).toEqual([{ descriptorId: 'pid', format: 'jwt_vc_json', tokenIndex: 0 }]);
  });

  it.each([
    ['a VC format (no VP) with a nested path', nestedEntry({ format: 'jwt_vc_json', path: '$.verifiableCredential[0]' }, 'jwt_vc'), 'path_nested is only allowed'],
    ['nesting twice', nestedEntry({ format: 'jwt_vc_json', path: '$.verifiableCredential[0]', path_nested: {} }), 'deeper nesting is not supported'],
    ['another descriptor id inside', nestedEntry({ id: 'other', format: 'jwt_vc_json', path: '$.verifiableCredential[0]' }), "path_nested.id must be 'degree'"],
    ['a nested format that is no JWT VC', nestedEntry({ format: 'dc+sd-jwt', path: '$.verifiableCredential[0]' }), 'path_nested.format must be jwt_vc_json'],
    ['a nested path with text after the index', nestedEntry({ format: 'jwt_vc_json', path: '$.verifiableCredential[0].x' }), 'path_nested.path'],
    ['a nested path with text before it', nestedEntry({ format: 'jwt_vc_json', path: 'x$.verifiableCredential[0]' }), 'path_nested.path'],
    ['a nested path that is no string', nestedEntry({ format: 'jwt_vc_json', path: 0 }), 'path_nested.path 0'],
  ])('refuses %s', (_, entry, detail) => {
    const e = refusal(() => locateSubmission(degreeDef, sub([entry]), [vpJwt({ vp: { verifiableCredential: ['a', 'b'] } })]));
    expect(e).toMatchObject({ reason: 'invalid_submission', credentialId: 'degree' });
    expect(e.detail).toContain(detail);
  });

  it('refuses a JWT VC inside a VP for a descriptor that allows SD-JWT only', () => {
    const entry = { id: 'pid', format: 'jwt_vp_json', path: '$', path_nested: { format: 'jwt_vc_json', path: '$.verifiableCredential[0]' } };
    const e = refusal(() => locateSubmission(definition(), sub([entry]), [vpJwt({ vp: { verifiableCredential: ['a'] } })]));
    expect(e).toMatchObject({ reason: 'invalid_submission', credentialId: 'pid' });
    expect(e.detail).toBe("descriptor_map[0].path_nested.format 'jwt_vc_json' is not allowed by input descriptor 'pid'");
  });

  it('a VP envelope the descriptor does not list is fine when the credential inside is allowed', () => {
    const vcOnly = { id: 'req', input_descriptors: [{ id: 'degree', format: { jwt_vc_json: {} }, constraints: {} }] } as unknown as PresentationDefinition;
    const entry = nestedEntry({ id: 'degree', format: 'jwt_vc_json', path: '$.verifiableCredential[1]' });
    expect(locateSubmission(vcOnly, sub([entry]), [vpJwt({ vp: { verifiableCredential: ['a', 'b'] } })])).toEqual([
      { descriptorId: 'degree', format: 'jwt_vp_json', tokenIndex: 0, nested: { format: 'jwt_vc_json', index: 1 } },
    ]);
  });

  it('bounds the nested index by the credentials of the VP, wherever the VP keeps them', () => {
    const at = (i: number) => [nestedEntry({ format: 'jwt_vc_json', path: `$.verifiableCredential[${i}]` })];
    // verifiableCredential at the top of the payload (no vp claim), and a VP given as an object.
    expect(refusal(() => locateSubmission(degreeDef, sub(at(1)), [vpJwt({ verifiableCredential: ['a'] })])).detail).toContain('points at credential 1, but the presentation holds 1');
    expect(locateSubmission(degreeDef, sub(at(0)), [vpJwt({ verifiableCredential: ['a'] })])[0]!.nested).toEqual({ format: 'jwt_vc_json', index: 0 });
    expect(refusal(() => locateSubmission(degreeDef, sub(at(2)), [{ vp: { verifiableCredential: ['a', 'b'] } }])).detail).toContain('holds 2');
    // A token that is not a JWT (or not JSON inside) is left to the verifier: nothing to bound here.
    for (const token of ['not-a-jwt', 'a.!!!.c', vpJwt('text'), 7]) expect(locateSubmission(degreeDef, sub(at(5)), [token])[0]!.nested!.index).toBe(5);
  });
});

describe('matchDcql: the detail of a refusal (what the verifier records and shows)', () => {
  const detail = (f: () => unknown) => {
    const e = refusal(f as () => never);
    return [e.reason, e.detail];
  };
  const w3c = (claims: Record<string, unknown>): VerifiedCredential => ({ ...degree(), types: undefined, claims });
  const w3cQuery = (over: Record<string, unknown> = {}) =>
    DcqlQuery.parse({ credentials: [{ id: 'w', format: 'jwt_vc_json', meta: { type_values: [['VerifiableCredential']] }, ...over }] } as never);

  it('names the query and what failed: the vct, a claim, a value, both at once, the trusted authorities', () => {
    expect(detail(() => matchDcql(pidQuery(), { pid: [pid({ vct: 'urn:other' })] }, { strict: true }))).toEqual([
      'constraints_not_met',
      "credential query 'pid': Expected vct to be 'urn:eudi:pid:1' but received 'urn:other'",
    ]);
    expect(detail(() => matchDcql(pidQuery({ claims: [{ path: ['birthdate'] }] }), { pid: [pid()] }, { strict: true }))).toEqual([
      'constraints_not_met',
      "credential query 'pid': Expected claim 'birthdate' to be defined",
    ]);
    expect(detail(() => matchDcql(pidQuery({ claims: [{ path: ['given_name'], values: ['Max'] }] }), { pid: [pid()] }, { strict: true }))).toEqual([
      'constraints_not_met',
      "credential query 'pid': Expected claim 'given_name' to be 'Max' but received 'Erika'",
    ]);
    expect(detail(() => matchDcql(pidQuery({ claims: [{ path: ['birthdate'] }] }), { pid: [pid({ vct: 'urn:other' })] }, { strict: true }))).toEqual([
      'constraints_not_met',
      "credential query 'pid': Expected vct to be 'urn:eudi:pid:1' but received 'urn:other'; Expected claim 'birthdate' to be defined",
    ]);
    expect(detail(() => matchDcql(pidQuery({ trusted_authorities: [{ type: 'aki', values: ['abc'] }] }), { pid: [pid()] }, { strict: true }))).toEqual([
      'constraints_not_met',
      "credential query 'pid': no trusted authority matches",
    ]);
  });

  it('a credential no trust decision covers is refused, naming its issuer', () => {
    expect(detail(() => matchDcql(pidQuery(), { pid: [pid({ issuerTrust: undefined })] }, { strict: true }))).toEqual([
      'untrusted_issuer',
      'https://issuer.example was not checked for trust',
    ]);
  });

  it('defaults when the verifier set no vct or types: a vct that is not a string is none, a W3C type that is not an array is none', () => {
    const numericVct = pid({ vct: undefined, claims: { vct: 42, given_name: 'Erika' } });
    expect(detail(() => matchDcql(pidQuery(), { pid: [numericVct] }, { strict: true }))).toEqual([
      'constraints_not_met',
      "credential query 'pid': Expected vct to be 'urn:eudi:pid:1' but received ''",
    ]);
    expect(detail(() => matchDcql(w3cQuery(), { w: [w3c({ iss: 'did:example:issuer', vc: { type: 'VerifiableCredential' } })] }, { strict: true }))).toEqual([
      'constraints_not_met',
      "credential query 'w': Value must include all of: VerifiableCredential",
    ]);
  });

  it('a `vc` claim that is an array is not the credential: its elements are no claims', () => {
    const query = w3cQuery({ meta: { type_values: [['x']] }, claims: [{ path: ['0'] }] });
    expect(detail(() => matchDcql(query, { w: [w3c({ iss: 'did:example:issuer', vc: ['x'] })] }, { strict: true }))).toEqual([
      'constraints_not_met',
      "credential query 'w': Value must include all of: x; Expected claim '0' to be defined",
    ]);
  });

  it('a null path element covers array elements only, not a member name under the same claim', () => {
    const odd = pid({ claims: { vct: PID, nat: ['DE'] }, disclosedPaths: [['nat', 0], ['nat', 'x']] });
    expect(detail(() => matchDcql(pidQuery({ claims: [{ path: ['nat', null] }] }), { pid: [odd] }, { strict: true }))).toEqual([
      'extra_disclosure',
      "credential query 'pid': disclosed /nat/x, which the query did not request",
    ]);
  });
});

describe('matching: bounds and details a Stryker run found unchecked', () => {
  const sub = (descriptor_map: unknown) => ({ id: 's', definition_id: 'req', descriptor_map });
  const vpJwt = (payload: unknown) => ['eyJhbGciOiJFUzI1NiJ9', Buffer.from(JSON.stringify(payload)).toString('base64url'), 'sig'].join('.');
  const degreeDef = { id: 'req', input_descriptors: [{ id: 'degree', format: { jwt_vp_json: {}, jwt_vp: {}, jwt_vc_json: {} }, constraints: {} }] } as unknown as PresentationDefinition;
  const nested = (path: string, format = 'jwt_vp_json') => ({ id: 'degree', format, path: '$', path_nested: { format: 'jwt_vc_json', path } });

  it("takes '$[i]' whole: many digits, nothing before or after", () => {
    const tokens = Array.from({ length: 11 }, (_, i) => `t${i}`);
    expect(locateSubmission(definition(), sub([{ id: 'pid', format: 'dc+sd-jwt', path: '$[10]' }]), tokens)[0]!.tokenIndex).toBe(10);
    for (const path of ['x$[0]', '$[0]x', '$[0].vp'])
      expect(refusal(() => locateSubmission(definition(), sub([{ id: 'pid', format: 'dc+sd-jwt', path }]), tokens)).detail).toContain(`.path "${path}" must be`);
  });

  it('takes a nested index of many digits, and a jwt_vp envelope as jwt_vp_json', () => {
    const vcs = Array.from({ length: 11 }, (_, i) => `vc${i}`);
    expect(locateSubmission(degreeDef, sub([nested('$.vp.verifiableCredential[10]')]), [vpJwt({ vp: { verifiableCredential: vcs } })])[0]!.nested).toEqual({ format: 'jwt_vc_json', index: 10 });
    expect(locateSubmission(degreeDef, sub([nested('$.verifiableCredential[1]', 'jwt_vp')]), [vpJwt({ vp: { verifiableCredential: vcs } })])[0]).toEqual({
      descriptorId: 'degree',
      format: 'jwt_vp',
      tokenIndex: 0,
      nested: { format: 'jwt_vc_json', index: 1 },
    });
  });

  it('bounds a nested index only inside a compact JWT of three parts', () => {
    const payload = Buffer.from(JSON.stringify({ vp: { verifiableCredential: ['a'] } })).toString('base64url');
    for (const token of [`x.${payload}`, `x.${payload}.y.z`]) expect(locateSubmission(degreeDef, sub([nested('$.verifiableCredential[5]')]), [token])[0]!.nested!.index).toBe(5);
  });

  it('takes a submission that maps any of several descriptors, and says which descriptor or definition is meant', () => {
    const two = {
      id: 'req',
      input_descriptors: [
        { id: 'pid', format: { 'dc+sd-jwt': {} }, constraints: {} },
        { id: 'degree', format: { jwt_vc_json: {}, jwt_vp_json: {} }, constraints: {} },
      ],
    } as unknown as PresentationDefinition;
    expect(Object.keys(matchDefinition(two, { pid: pid(), degree: degree() }))).toEqual(['pid', 'degree']);
    expect(refusal(() => matchDefinition(two, { pid: pid(), other: degree() })).detail).toBe("'other' is not an input descriptor of definition 'req'");
    expect(refusal(() => matchDefinition(two, { pid: pid() })).detail).toBe("no credential was presented for input descriptor 'degree'");
    expect(refusal(() => matchDefinition(two, { pid: pid(), degree: pid() })).detail).toBe("input descriptor 'degree' does not allow dc+sd-jwt (allowed: jwt_vc_json, jwt_vp_json)");
  });

  it('refuses a multiple query when any one of its presentations fails, even though another satisfies it', () => {
    const wrong = pid({ vct: 'urn:other', claims: { ...pid().claims, vct: 'urn:other' } });
    expect(refusal(() => matchDcql(pidQuery({ multiple: true }), { pid: [pid(), wrong] }, { strict: false }))).toMatchObject({ reason: 'constraints_not_met', credentialId: 'pid' });
  });

  it('names the required credential set that is not satisfied, not the first set', () => {
    const q = DcqlQuery.parse({
      credentials: [
        { id: 'degree', format: 'jwt_vc_json', meta: { type_values: [['UniversityDegreeCredential']] } },
        { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [PID] }, claims: [{ path: ['given_name'] }] },
        { id: 'mdl', format: 'dc+sd-jwt', meta: { vct_values: ['urn:mdl'] }, claims: [{ path: ['given_name'] }] },
      ],
      credential_sets: [{ options: [['degree']] }, { options: [['pid'], ['mdl']] }],
    });
    const e = refusal(() => matchDcql(q, { degree: [degree()] }, { strict: true }));
    expect(e).toMatchObject({ reason: 'missing_credential', credentialId: 'pid' });
    expect(e.detail).toBe('credential_sets[1] is not satisfied: none of its options ([pid] | [mdl]) was presented');
    const both = DcqlQuery.parse({ ...q, credential_sets: [{ options: [['degree']] }, { options: [['pid', 'mdl']] }] } as never);
    expect(refusal(() => matchDcql(both, { degree: [degree()] }, { strict: true })).detail).toBe('credential_sets[1] is not satisfied: none of its options ([pid, mdl]) was presented');
  });

  it('checks each presentation of a multiple query against the claim sets that presentation satisfies', () => {
    const q = pidQuery({
      multiple: true,
      claims: [
        { id: 'given', path: ['given_name'] },
        { id: 'family', path: ['family_name'] },
        { id: 'adult', path: ['age_over_18'] },
      ],
      claim_sets: [['adult'], ['given', 'family']],
    });
    const { age_over_18: _, ...named } = pid().claims;
    const adultOnly = pid({ claims: { iss: 'https://issuer.example', vct: PID, age_over_18: true }, disclosedPaths: [['age_over_18']] });
    const namedOnly = pid({ claims: named, disclosedPaths: [['given_name'], ['family_name']] });
    expect(Object.keys(matchDcql(q, { pid: [adultOnly, namedOnly] }, { strict: true }))).toEqual(['pid']);
  });

  it('translated from a definition, refuses extra disclosure in the DCQL step, with its detail', () => {
    const extra = pid({ disclosedPaths: [['given_name'], ['family_name']] });
    expect(refusal(() => matchDcqlForDefinition(definition({ limit_disclosure: 'required' }), pidQuery(), { pid: [extra] })).detail).toBe(
      "credential query 'pid': disclosed /family_name, which the query did not request",
    );
  });

  it('refuses an answer to a query the request does not have, and an unbound presentation, saying so', () => {
    expect(refusal(() => matchDcql(pidQuery(), { other: [pid()] }, { strict: true })).detail).toBe("the vp_token answers 'other', which is not a credential query of the request");
    expect(refusal(() => matchDcql(pidQuery(), { pid: [pid({ holderBound: false })] }, { strict: true })).detail).toBe("credential query 'pid' requires holder binding");
  });
});
