import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { API_DEFAULTS } from '../lib/service/api-settings';
import type { Route } from '../lib/service/routes';
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

/**
 * The CDK app: the service stack (with its nested area stacks), configured from CDK context, checked by
 * cdk-nag's AwsSolutions pack. `routes` replaces the route table (tests only).
 */
export function createServiceApp(context: Record<string, unknown> = {}, outdir?: string, env: NodeJS.ProcessEnv = process.env, routes?: readonly Route[]) {
  const app = new App({ context, ...(outdir ? { outdir } : {}) });
  const ctx = (key: string, fallback: number | string) => app.node.tryGetContext(key) ?? fallback;
  const serviceName = String(ctx('serviceName', 'credential-service'));
  const num = (key: string, fallback: number) => {
    const value = Number(ctx(key, fallback));
    if (!Number.isFinite(value) || value < 0) throw new Error(`context ${key} must be a non-negative number`);
    return value;
  };
  const domainName = app.node.tryGetContext('customDomain') as string | undefined;
  const certificateArn = app.node.tryGetContext('customDomainCertificateArn') as string | undefined;
  if (Boolean(domainName) !== Boolean(certificateArn)) throw new Error('context customDomain and customDomainCertificateArn go together');
  if (domainName && !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i.test(domainName)) throw new Error('context customDomain must be a host name');
  const customDomain = domainName && certificateArn ? { domainName, certificateArn } : undefined;
  const publicBaseUrl = (app.node.tryGetContext('publicBaseUrl') as string | undefined) ?? (customDomain ? `https://${customDomain.domainName}` : undefined);
  const alarmEmail = app.node.tryGetContext('alarmEmail') as string | undefined;
  const emailSender = app.node.tryGetContext('emailSender') as string | undefined;
  const sesConfigurationSet = app.node.tryGetContext('sesConfigurationSet') as string | undefined;
  const stack = new ServiceStack(app, 'CredentialService', {
    root: REPO_ROOT,
    serviceName,
    authorizerCacheTtlSeconds: num('authorizerCacheTtlSeconds', API_DEFAULTS.authorizerCacheTtlSeconds),
    throttles: {
      stage: { rateLimit: num('throttleRateLimit', API_DEFAULTS.throttleRateLimit), burstLimit: num('throttleBurstLimit', API_DEFAULTS.throttleBurstLimit) },
      tenant: {
        rateLimit: num('tenantThrottleRateLimit', API_DEFAULTS.tenantThrottleRateLimit),
        burstLimit: num('tenantThrottleBurstLimit', API_DEFAULTS.tenantThrottleBurstLimit),
      },
      platform: {
        rateLimit: num('platformThrottleRateLimit', API_DEFAULTS.platformThrottleRateLimit),
        burstLimit: num('platformThrottleBurstLimit', API_DEFAULTS.platformThrottleBurstLimit),
      },
      publicRoute: {
        rateLimit: num('publicThrottleRateLimit', API_DEFAULTS.publicThrottleRateLimit),
        burstLimit: num('publicThrottleBurstLimit', API_DEFAULTS.publicThrottleBurstLimit),
      },
      protocolRoute: {
        rateLimit: num('protocolThrottleRateLimit', API_DEFAULTS.protocolThrottleRateLimit),
        burstLimit: num('protocolThrottleBurstLimit', API_DEFAULTS.protocolThrottleBurstLimit),
      },
    },
    limits: {
      maxDidsPerWallet: num('maxDidsPerWallet', API_DEFAULTS.maxDidsPerWallet),
      maxDidCreationsPerMinute: num('maxDidCreationsPerMinute', API_DEFAULTS.maxDidCreationsPerMinute),
    },
    ...(alarmEmail ? { alarmEmail } : {}),
    ...(emailSender ? { email: { sender: emailSender, ...(sesConfigurationSet ? { configurationSet: sesConfigurationSet } : {}) } } : {}),
    indyNamespace: String(ctx('indyNamespace', serviceName)),
    ...(publicBaseUrl ? { publicBaseUrl } : {}),
    ...(customDomain ? { customDomain } : {}),
    ...taaContext(app.node.tryGetContext('taa'), app.node.tryGetContext('taaFile')),
    ...(routes ? { routes } : {}),
    // What the CDK CLI sets (from the profile, or us-east-1 without one): the app must synthesize either way.
    env: { account: env.CDK_DEFAULT_ACCOUNT, region: env.CDK_DEFAULT_REGION },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack };
}
