/**
 * The identity credential the OID4VP suites and bench present: a `dc+sd-jwt` configuration whose
 * every claim is selectively disclosable (one nested), issued by a did:key issuer of the service.
 */
export const IDENTITY_VCT = 'https://credentials.example.com/identity_credential';
export const IDENTITY_SUBJECT = { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', address: { street: 'Heidestraße 17', locality: 'Köln' } };
export const IDENTITY_SD_LIST = ['/given_name', '/family_name', '/birthdate', '/address/street', '/address/locality'];

/** The body of `POST /api/v1/oid4vci/credentials-supported/sd-jwt` for it (`vct` overridable for a second configuration). */
export function identityConfiguration(id = 'Identity_dc', vct = IDENTITY_VCT) {
  return {
    id,
    format: 'dc+sd-jwt',
    vct,
    claims: { given_name: { mandatory: true }, family_name: {}, birthdate: {}, address: { street: {}, locality: {} } },
    sd_list: IDENTITY_SD_LIST,
    cryptographic_binding_methods_supported: ['jwk', 'did:key'],
  };
}

/** Every verifier alg for SD-JWT VC, under the given media type's name. */
export const sdJwtVpFormats = (format: 'vc+sd-jwt' | 'dc+sd-jwt') => ({ [format]: { 'sd-jwt_alg_values': ['ES256', 'EdDSA'], 'kb-jwt_alg_values': ['ES256', 'EdDSA'] } });

/**
 * Family name and birth date of an identity credential, nothing more (`limit_disclosure: required`);
 * the birth date also checked by a pattern, which DCQL cannot carry (checked on the answer instead).
 */
export const FAMILY_NAME_AND_BIRTHDATE = {
  id: 'name-and-birthdate',
  purpose: 'Family name and birth date',
  input_descriptors: [
    {
      id: 'identity',
      name: 'Identity',
      purpose: 'Who you are',
      format: { 'vc+sd-jwt': {} },
      constraints: {
        limit_disclosure: 'required',
        fields: [{ path: ['$.vct'], filter: { type: 'string', const: IDENTITY_VCT } }, { path: ['$.family_name'] }, { path: ['$.birthdate'], filter: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } }],
      },
    },
  ],
};
