import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as z from 'zod';
import { API_DEFAULTS } from '../service/api-settings';
import { ENV } from '../service/env-names';

/** The one place that reads process.env: parsed once, typed, frozen. */
const DEFAULT_RETRY_DELAYS = '15,45,135,405,1215,3645,10935,28800,28800';

const webhooks = {
  webhookQueueUrl: z.string().min(1).optional(),
  emailSender: z.string().min(3).default('credentials@example.invalid'),
  sesConfigurationSet: z.string().min(1).optional(),
  webhookAllowLoopback: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  webhookRetryDelaysSeconds: z
    .string()
    .default(DEFAULT_RETRY_DELAYS)
    .transform((v) => v.split(',').map((n) => Number(n.trim())))
    .pipe(z.array(z.number().int().min(0).max(86400)).min(0).max(20)),
  webhookTimeoutMs: z.coerce.number().int().min(100).max(30000).default(10000),
};

const identity = {
  publicBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
  indyNamespace: z
    .string()
    .regex(/^[A-Za-z0-9_-]+(:[A-Za-z0-9_-]+)*$/, 'INDY_NAMESPACE: namespace identifiers separated by colons')
    .default('credential-service'),
  usageKeyPrefix: z.string().min(1).max(100).default('credential-service'),
  usagePlanName: z.string().min(1).optional(),
  maxDidsPerWallet: z.coerce.number().int().min(1).max(100_000).default(API_DEFAULTS.maxDidsPerWallet),
  maxDidCreationsPerMinute: z.coerce.number().int().min(1).max(10_000).default(API_DEFAULTS.maxDidCreationsPerMinute),
  taa: z
    .object({
      text: z.string().min(1),
      version: z.string().min(1).max(64),
      aml: z.record(z.string().min(1), z.string()).refine((r) => Object.keys(r).length > 0, 'TAA_AML needs at least one mechanism'),
      amlVersion: z.string().min(1).max(64),
    })
    .optional(),
};

const meta = {
  /** Where /docs/{asset} reads the renderer's files: beside the handler deployed, the npm package locally. */
  docsAssetsDir: z.string().min(1),
};

const schema = z.discriminatedUnion('keyBackend', [
  z.object({
    keyBackend: z.literal('kms'),
    tableName: z.string().min(1),
    macKmsKeyId: z.string().min(1),
    issuerKeyTag: z.string().min(1),
    /** The KMS key of DIDComm data keys: only for functions that declare `dataKeys`. */
    didcommKmsKeyId: z.string().min(1).optional(),
    /** Absent for functions that never act in a wallet's session. */
    tenantRoleArn: z.string().min(1).optional(),
    /** Only for a function that declares `registry` grants (tenancy). */
    registryRoleArn: z.string().min(1).optional(),
    serviceName: z.string().default('credential-service'),
    ...webhooks,
    ...identity,
    ...meta,
  }),
  z.object({
    keyBackend: z.literal('local'),
    tableName: z.string().min(1),
    localMasterKey: z.string().regex(/^[0-9a-f]{64}$/, 'LOCAL_MASTER_KEY must be 32 bytes of hex'),
    serviceName: z.string().default('credential-service'),
    ...webhooks,
    ...identity,
    ...meta,
  }),
]);

export type Config = Readonly<z.infer<typeof schema>>;

let cached: Config | undefined;

/** The TAA is configured only when its text, version and mechanisms are all set; a bad AML is an error. */
function taaFromEnv(env: NodeJS.ProcessEnv): unknown {
  const file = env[ENV.taaFile];
  if (file) {
    const path = resolve(env.LAMBDA_TASK_ROOT ?? process.cwd(), file);
    try {
      return JSON.parse(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new Error(`Invalid configuration: taa: TAA_FILE ${path} cannot be read as JSON: ${(err as Error).message}`);
    }
  }
  const text = env[ENV.taaText];
  if (!text) return undefined;
  let aml: unknown = env[ENV.taaAml];
  try {
    aml = aml ? JSON.parse(String(aml)) : undefined;
  } catch {
    throw new Error('Invalid configuration: taa: TAA_AML is not JSON');
  }
  return { text, version: env[ENV.taaVersion], aml, amlVersion: env[ENV.taaAmlVersion] ?? '1.0' };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  if (cached && env === process.env) return cached;
  const parsed = schema.safeParse({
    keyBackend: env[ENV.keyBackend] ?? 'kms',
    tableName: env[ENV.tableName],
    macKmsKeyId: env[ENV.macKmsKeyId],
    didcommKmsKeyId: env[ENV.didcommKmsKeyId] || undefined,
    localMasterKey: env[ENV.localMasterKey],
    serviceName: env[ENV.serviceName],
    webhookQueueUrl: env[ENV.webhookQueueUrl] || undefined,
    emailSender: env[ENV.emailSender] || undefined,
    sesConfigurationSet: env[ENV.sesConfigurationSet] || undefined,
    webhookAllowLoopback: env[ENV.webhookAllowLoopback] || undefined,
    webhookRetryDelaysSeconds: env[ENV.webhookRetryDelays] || undefined,
    webhookTimeoutMs: env[ENV.webhookTimeoutMs] || undefined,
    issuerKeyTag: env[ENV.issuerKeyTag],
    publicBaseUrl: env[ENV.publicBaseUrl] || undefined,
    indyNamespace: env[ENV.indyNamespace] || undefined,
    tenantRoleArn: env[ENV.tenantRoleArn] || undefined,
    registryRoleArn: env[ENV.registryRoleArn] || undefined,
    usageKeyPrefix: env[ENV.usageKeyPrefix] || undefined,
    usagePlanName: env[ENV.usagePlanName] || undefined,
    maxDidsPerWallet: env[ENV.maxDidsPerWallet] || undefined,
    maxDidCreationsPerMinute: env[ENV.maxDidCreationsPerMinute] || undefined,
    taa: taaFromEnv(env),
    docsAssetsDir: resolve(env.LAMBDA_TASK_ROOT ?? process.cwd(), env[ENV.docsAssetsDir] || '.'),
  });
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${fields}`);
  }
  const config = Object.freeze(parsed.data);
  if (env === process.env) cached = config;
  return config;
}
