/**
 * The benchmark's standing peer (issuance-peer.ts starts it as a child process, so that its CPU is
 * its own): Credo 0.6.3's OpenID4VCI issuer (`@credo-ts/openid4vc`) with in-memory storage and
 * node:crypto keys (test/helpers/credo-support.ts), serving the same SD-JWT VC as our bench issuer:
 * 5 claims, 4 selectively disclosable (one nested), issuer did:key Ed25519, holder `jwk` binding.
 * Offers are created through the agent API behind one minimal HTTP endpoint, `POST /bench/offer`.
 * Tells the parent `{ issuer, offerUrl }` over IPC when ready.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { ClaimFormat } from '@credo-ts/core';
import { OpenId4VcModule, type OpenId4VciCredentialConfigurationsSupportedWithFormats, type OpenId4VciCredentialRequestToCredentialMapper } from '@credo-ts/openid4vc';
import { createCredoAgent } from '../../helpers/credo-holder';
import { BENCH_CONFIGURATION_ID, BENCH_SUBJECT, BENCH_VCT } from './shared';

const ISSUER_ID = 'bench';

const configurations: OpenId4VciCredentialConfigurationsSupportedWithFormats = {
  [BENCH_CONFIGURATION_ID]: {
    format: 'dc+sd-jwt',
    vct: BENCH_VCT,
    cryptographic_binding_methods_supported: ['jwk', 'did:key'],
    credential_signing_alg_values_supported: ['EdDSA'],
    proof_types_supported: { jwt: { proof_signing_alg_values_supported: ['ES256', 'EdDSA'] } },
    credential_metadata: {
      display: [{ name: 'Identity' }],
      claims: [{ path: ['given_name'], mandatory: true }, { path: ['family_name'], mandatory: true }, { path: ['birthdate'] }, { path: ['nationality'] }, { path: ['address', 'street'] }, { path: ['address', 'locality'] }, { path: ['address', 'country'] }],
    },
  },
};

async function main() {
  const app = express();
  const server = await new Promise<import('node:http').Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oid4vci`;
  let issuerDidUrl = '';
  // Our bench disclosure list (/given_name, /family_name, /birthdate, /address/street) as Credo's frame.
  const mapper: OpenId4VciCredentialRequestToCredentialMapper = ({ holderBinding }) => ({
    type: 'credentials',
    format: ClaimFormat.SdJwtDc,
    credentials: holderBinding.keys.map((key) => ({
      payload: { vct: BENCH_VCT, ...BENCH_SUBJECT },
      holder: key.method === 'did' ? { method: 'did' as const, didUrl: key.didUrl } : { method: 'jwk' as const, jwk: key.jwk },
      issuer: { method: 'did' as const, didUrl: issuerDidUrl },
      disclosureFrame: { _sd: ['given_name', 'family_name', 'birthdate'], address: { _sd: ['street'] } },
    })),
  });
  const agent = await createCredoAgent({ openid4vc: new OpenId4VcModule({ app, issuer: { baseUrl, credentialRequestToCredentialMapper: mapper } }) });
  const created = await agent.dids.create({ method: 'key', options: { createKey: { type: { kty: 'OKP', crv: 'Ed25519' } } } });
  if (created.didState.state !== 'finished') throw new Error('credo issuer did');
  issuerDidUrl = created.didState.didDocument.verificationMethod![0]!.id;
  await agent.openid4vc.issuer.createIssuer({ issuerId: ISSUER_ID, credentialConfigurationsSupported: configurations });

  // The minimal HTTP endpoint in front of the agent API (our side's counterpart: POST /api/v1/oid4vci/issue).
  app.post('/bench/offer', async (_req, res) => {
    try {
      const { issuanceSession } = await agent.openid4vc.issuer.createCredentialOffer({
        issuerId: ISSUER_ID,
        credentialConfigurationIds: [BENCH_CONFIGURATION_ID],
        preAuthorizedCodeFlowConfig: {},
        version: 'v1',
      });
      res.json({ pre_authorized_code: issuanceSession.preAuthorizedCode });
    } catch (e) {
      res.status(500).json({ error: String(e) });
    }
  });

  process.send!({ issuer: `${baseUrl}/${ISSUER_ID}`, offerUrl: `${baseUrl.replace(/\/oid4vci$/, '')}/bench/offer` });
  process.on('disconnect', () => process.exit(0));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
