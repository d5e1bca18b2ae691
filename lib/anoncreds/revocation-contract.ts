import * as z from 'zod';
import type { OperationContracts } from '../http/contract';

/** Contract 4.2's AnonCreds revocation (docs/anoncreds.md, "Revoking a credential"). */
export const anoncredsRevocationContracts = {
  revokeAnonCredsCredential: {
    body: z.strictObject({
      credential_exchange_id: z
        .string()
        .max(128)
        .nullish()
        .meta({ description: "The AnonCreds exchange whose credential to revoke (format anoncreds or indy, issued). Optional in the contract; required here, since no other field names the credential" }),
      connection_id: z
        .string()
        .max(64)
        .nullish()
        .meta({ description: "Notify the holder (Aries RFC 0721 revocation notification 2.0) on this connection: it must be the exchange's own (400 connection_mismatch otherwise) and active (409 connection_not_active). Without it, nobody is notified" }),
    }),
    response: z
      .object({ message: z.string().meta({ description: 'What happened: revoked (and whether the holder is notified), or already revoked (nothing changed)' }) })
      .meta({ title: 'AnonCredsRevokeResult' }),
    errors: [400, 401, 403, 404, 409],
  },
} satisfies OperationContracts;
