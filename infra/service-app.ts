import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { fileURLToPath } from 'node:url';
import { API_DEFAULTS } from './api-settings';
import { ServiceStack } from './stacks/service-stack';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The CDK app: the service stack, configured from CDK context, checked by cdk-nag's AwsSolutions pack. */
export function createServiceApp(context: Record<string, unknown> = {}, outdir?: string) {
  const app = new App({ context, ...(outdir ? { outdir } : {}) });
  const ctx = (key: string, fallback: number | string) => app.node.tryGetContext(key) ?? fallback;
  const stack = new ServiceStack(app, 'CredentialService', {
    root: REPO_ROOT,
    serviceName: String(ctx('serviceName', 'credential-service')),
    authorizerCacheTtlSeconds: Number(ctx('authorizerCacheTtlSeconds', API_DEFAULTS.authorizerCacheTtlSeconds)),
    throttleRateLimit: Number(ctx('throttleRateLimit', API_DEFAULTS.throttleRateLimit)),
    throttleBurstLimit: Number(ctx('throttleBurstLimit', API_DEFAULTS.throttleBurstLimit)),
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack };
}
