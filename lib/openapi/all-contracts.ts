import type { OperationContracts } from '../http/contract';
import { tenancyContracts } from '../tenancy/contract';
import { webhookContracts } from '../webhooks/contract';
import { didContracts, resolverContracts } from '../dids/contract';
import { metaContracts } from '../meta/contract';

/** Every feature's contracts, for the OpenAPI document. A feature adds its map here. */
export const ALL_CONTRACTS: OperationContracts = { ...tenancyContracts, ...webhookContracts, ...didContracts, ...resolverContracts, ...metaContracts };
