import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { API_DEFAULTS } from '../lib/service/api-settings';
import { ServiceStack } from './stacks/service-stack';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The publication agreement from context: `-c taaFile=agreement.json` (a JSON file, the way to pass a
 * real agreement's text), `-c taa='{"text":…,"version":…,"aml":{…}}'` or an object in cdk.json;
 * absent: no agreement is required.
 */
function taaContext(value: unknown, file: unknown) {
  if (value === undefined && typeof file === 'string') value = readFileSync(file, 'utf8');
  if (value === undefined) return {};
  const taa = (typeof value === 'string' ? JSON.parse(value) : value) as { text?: string; version?: string; aml?: Record<string, string>; amlVersion?: string };
  if (!taa.text || !taa.version || !taa.aml || Object.keys(taa.aml).length === 0) {
    throw new Error('context taa needs text, version and a non-empty aml {mechanism: description}');
  }
  return { taa: { text: taa.text, version: taa.version, aml: taa.aml, amlVersion: taa.amlVersion ?? '1.0' } };
}

/** The CDK app: the service stack, configured from CDK context, checked by cdk-nag's AwsSolutions pack. */
export function createServiceApp(context: Record<string, unknown> = {}, outdir?: string) {
  const app = new App({ context, ...(outdir ? { outdir } : {}) });
  const ctx = (key: string, fallback: number | string) => app.node.tryGetContext(key) ?? fallback;
  const serviceName = String(ctx('serviceName', 'credential-service'));
  const publicBaseUrl = app.node.tryGetContext('publicBaseUrl') as string | undefined;
  const stack = new ServiceStack(app, 'CredentialService', {
    root: REPO_ROOT,
    serviceName,
    authorizerCacheTtlSeconds: Number(ctx('authorizerCacheTtlSeconds', API_DEFAULTS.authorizerCacheTtlSeconds)),
    throttleRateLimit: Number(ctx('throttleRateLimit', API_DEFAULTS.throttleRateLimit)),
    throttleBurstLimit: Number(ctx('throttleBurstLimit', API_DEFAULTS.throttleBurstLimit)),
    indyNamespace: String(ctx('indyNamespace', serviceName)),
    ...(publicBaseUrl ? { publicBaseUrl } : {}),
    ...taaContext(app.node.tryGetContext('taa'), app.node.tryGetContext('taaFile')),
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack };
}
