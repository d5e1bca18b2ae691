import type { OperationContracts } from '../http/contract';
import { tenancyContracts } from '../tenancy/contract';
import { webhookContracts } from '../webhooks/contract';
import { didContracts } from '../dids/contract';
import { resolverContracts } from '../resolver/contract';
import { taaContracts } from '../taa/contract';
import { metaContracts } from '../meta/contract';
import { issuerProtocolContracts } from '../oid4vci/protocol/contract';
import { oid4vciAdminContracts } from '../oid4vci/contract';
import { jsonldContracts, jsonldPublicContracts } from '../jsonld/contract';
import { anoncredsContracts, anoncredsPublicContracts } from '../anoncreds/contract';
import { anoncredsRevocationContracts } from '../anoncreds/revocation-contract';
import { anoncredsIssuanceContracts } from '../anoncreds/issuance-contract';
import { jsonldIssuanceContracts } from '../jsonld/issuance-contract';
import { statusListContracts, statusListPublicContracts } from '../status-lists/contract';
import { emailContracts } from '../email/contract';
import { didcommContracts, didcommPublicContracts } from '../didcomm/contract';
import { oid4vpAdminContracts, oid4vpPublicContracts } from '../oid4vp/contract';

/** Every feature's contracts, for the OpenAPI document. A feature adds its map here. */
export const ALL_CONTRACTS: OperationContracts = { ...tenancyContracts, ...webhookContracts, ...didContracts, ...taaContracts, ...oid4vciAdminContracts, ...resolverContracts, ...issuerProtocolContracts, ...statusListContracts, ...statusListPublicContracts, ...emailContracts, ...oid4vpAdminContracts, ...oid4vpPublicContracts, ...didcommContracts, ...didcommPublicContracts, ...jsonldContracts, ...jsonldPublicContracts, ...anoncredsContracts, ...anoncredsIssuanceContracts, ...jsonldIssuanceContracts, ...anoncredsPublicContracts, ...metaContracts, ...anoncredsRevocationContracts };
