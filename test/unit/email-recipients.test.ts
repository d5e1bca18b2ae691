import { draftFromJwt, draftFromSdJwt, SupportedCredentialService } from '../../lib/oid4vci/supported';
import { BULK_LIMITS, normaliseAddress, planRecipients, supportedIndex, type EmailEntry } from '../../lib/email/recipients';
import { keys, tenantScope } from '../../lib/store/keys';
import { MemoryStore } from '../helpers/memory-store';

/** Planning a bulk request: every entry lands in exactly one place, for a reason a tenant can read. */

const scope = tenantScope('3');

async function wallet() {
  const store = new MemoryStore();
  await store.write([{ type: 'put', item: { ...keys.wallet(scope), type: 'wallet', wallet_id: scope.walletId } }]);
  const service = new SupportedCredentialService({ store });
  const pid = await service.create(
    scope,
    draftFromSdJwt({
      id: 'Pid',
      vct: 'urn:pid',
      claims: { given_name: { mandatory: true, value_type: 'string' }, age: { value_type: 'integer' }, adult: { value_type: 'boolean' }, birthdate: { value_type: 'date' }, address: { street: { value_type: 'string' } } },
    }),
  );
  const degree = await service.create(scope, draftFromJwt({ id: 'Degree', type: ['VerifiableCredential', 'Degree'], '@context': ['https://www.w3.org/2018/credentials/v1'], credentialSubject: { degree: {} } }));
  return { pid, degree, find: supportedIndex(await service.list(scope)) };
}

const entry = (email: string, schema_id: string, attributes: Record<string, string>, time_to_accept = 7): EmailEntry => ({
  email,
  schema_id,
  time_to_accept,
  attributes: Object.entries(attributes).map(([name, value]) => ({ name, value })),
});

describe('addresses', () => {
  test('normalised (spaces, domain case) or refused', () => {
    expect(normaliseAddress('  Ada.Lovelace@Example.ORG ')).toBe('Ada.Lovelace@example.org');
    expect(normaliseAddress('a+tag@sub.example.co.uk')).toBe('a+tag@sub.example.co.uk');
    for (const bad of ['', 'plain', '@example.org', 'a@', 'a@localhost', 'a@@example.org', 'a b@example.org', '.a@example.org', 'a..b@example.org', 'a@-example.org', 'a@example.123', `${'x'.repeat(65)}@example.org`, 'a@exa_mple.org', 'a@example.org\r\nBcc: x@evil.org']) {
      expect([bad, normaliseAddress(bad)]).toEqual([bad, null]);
    }
  });
});

describe('planning a request', () => {
  test('a mixed batch: each entry in exactly one array, for its reason', async () => {
    const { pid, degree, find } = await wallet();
    const plan = planRecipients(
      [
        entry('ada@example.org', pid.supported_cred_id, { given_name: 'Ada', age: '36', adult: 'true', birthdate: '1815-12-10', '/address/street': 'St James Sq' }),
        entry('grace@example.org', 'Degree', { degree: 'BSc' }, 0.5),
        entry('not-an-address', 'Pid', { given_name: 'X' }),
        entry('nobody@example.org', 'NoSuchSchema', {}),
        entry('missing@example.org', 'Pid', { age: '3' }),
        entry('unknown@example.org', 'Pid', { given_name: 'U', nickname: 'u' }),
        entry('typed@example.org', 'Pid', { given_name: 'T', age: 'old' }),
        entry('late@example.org', 'Pid', { given_name: 'L' }, BULK_LIMITS.maxDaysToAccept + 1),
        entry('ADA@EXAMPLE.ORG ', pid.supported_cred_id, { given_name: 'Ada', age: '36', adult: 'true', birthdate: '1815-12-10', '/address/street': 'St James Sq' }),
        entry('Grace@Example.org', 'Pid', { given_name: 'Grace' }),
      ],
      find,
    );
    expect(plan.invalidEmails).toEqual(['not-an-address']);
    expect(plan.recipients.map((r) => r.email)).toEqual(['ada@example.org', 'grace@example.org']);
    expect(plan.recipients[0]).toMatchObject({ supportedCredId: pid.supported_cred_id, expiresIn: 7 * 86400, credentialSubject: { given_name: 'Ada', age: 36, adult: true, birthdate: '1815-12-10', address: { street: 'St James Sq' } } });
    expect(plan.recipients[1]).toMatchObject({ supportedCredId: degree.supported_cred_id, expiresIn: 43200, credentialSubject: { degree: 'BSc' } });
    expect(plan.failures.map((f) => [f.email, f.reason])).toEqual([
      ['nobody@example.org', 'unknown_schema'],
      ['missing@example.org', 'invalid_attributes'],
      ['unknown@example.org', 'invalid_attributes'],
      ['typed@example.org', 'invalid_attributes'],
      ['late@example.org', 'invalid_time_to_accept'],
      ['Grace@Example.org', 'duplicate_address'],
    ]);
    const why = (email: string) => plan.failures.find((f) => f.email === email)!.details.map((d) => d.message).join('; ');
    expect(why('missing@example.org')).toMatch(/given_name/);
    expect(why('unknown@example.org')).toMatch(/nickname/);
    expect(why('typed@example.org')).toMatch(/age must be an integer/);
  });

  test('values are read as their declared types, and a bad date is refused', async () => {
    const { find } = await wallet();
    const plan = planRecipients([entry('a@example.org', 'Pid', { given_name: 'A', birthdate: '10/12/1815' }), entry('b@example.org', 'Pid', { given_name: 'B', adult: 'yes' }), entry('c@example.org', 'Degree', { degree: 'x', id: 'did:example:c' })], find);
    expect(plan.failures.map((f) => f.email)).toEqual(['a@example.org', 'b@example.org']);
    expect(plan.recipients.map((r) => r.credentialSubject)).toEqual([{ degree: 'x', id: 'did:example:c' }]);
  });
});
