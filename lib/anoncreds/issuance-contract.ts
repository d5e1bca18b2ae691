import * as z from 'zod';
import type { OperationContracts } from '../http/contract';
import { MAX_INVITATION_ID } from '../didcomm/records';
import { MAX_TIMEOUT_SECONDS } from '../didcomm/protocols/issue-credential-v2/records';
import { ExchangeView } from '../jsonld/issuance-contract';
import { MAX_ATTRIBUTE_VALUE_LENGTH } from './issuance';
import { REGISTRY_LIMITS } from './registry';

/** Contract 4.2 `POST /api/v1/credentials`: an AnonCreds credential offered over DIDComm (docs/anoncreds.md, "Issuing credentials"). */
export const anoncredsIssuanceContracts = {
  issueAnonCredsCredential: {
    query: z.object({
      timeout: z.coerce.number().min(0).max(MAX_TIMEOUT_SECONDS).optional().meta({ description: `Seconds to wait for the holder's request and the credential (0–${MAX_TIMEOUT_SECONDS}; default 0: answer at once)` }),
    }),
    body: z.object({
      schema_id: z.string().min(1).max(1200).nullish().meta({ description: "One of this wallet's schemas (its schema_id, or its resource id); required in practice" }),
      cred_def_id: z.string().min(1).max(1200).nullish().meta({ description: "Not in the contract: which of the schema's finished credential definitions signs (default: the most recently created finished one)" }),
      attributes: z
        .array(z.object({ name: z.string().min(1).max(REGISTRY_LIMITS.maxAttributeLength), value: z.string().max(MAX_ATTRIBUTE_VALUE_LENGTH) }))
        .max(REGISTRY_LIMITS.maxAttributes)
        .nullish()
        .meta({ description: "Exactly the schema's attribute names, each once, with string values (required in practice); AnonCreds encodes each value" }),
      contact_id: z.string().min(1).max(128).nullish().meta({ description: 'An active connection of this wallet: the offer goes to it' }),
      invitation_id: z.number().int().min(1).max(MAX_INVITATION_ID).nullish().meta({ description: "One of this wallet's invitations: the offer goes to its connection, or to the first connection it produces" }),
      rule: z.string().max(1024).nullish().meta({ description: 'Refused (400 rule_not_supported): the contract gives it no meaning' }),
      comment: z.string().max(1024).nullish().meta({ description: 'Sent with the offer (not in the contract)' }),
    }),
    bodyOptional: true,
    response: z.array(ExchangeView),
    errors: [400, 401, 403, 404, 409],
  },
} satisfies OperationContracts;
