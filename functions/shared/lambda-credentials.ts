import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `@aws-sdk/credential-provider-node` in the deployed bundles only (an esbuild alias in
 * infra/constructs/service-function.ts). Lambda gives a function its role's credentials in
 * environment variables and nowhere else, so the SDK's default chain — SSO, INI files, web identity,
 * container and instance metadata, with their nested clients — is ~60 KB per bundle that never runs.
 * Tests and the local runtime are not bundled and keep the real chain.
 */
export const defaultProvider = (init: Parameters<typeof fromEnv>[0] = {}) => fromEnv(init);
