import { z } from 'zod';
import { ENV } from '../../infra/env-names';

/** The one place that reads process.env: parsed once, typed, frozen. */
const DEFAULT_RETRY_DELAYS = '15,45,135,405,1215,3645,10935,28800,28800';

const webhooks = {
  webhookQueueUrl: z.string().min(1).optional(),
  webhookAllowLoopback: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  webhookRetryDelaysSeconds: z
    .string()
    .default(DEFAULT_RETRY_DELAYS)
    .transform((v) => v.split(',').map((n) => Number(n.trim())))
    .pipe(z.array(z.number().int().min(0).max(86400)).min(0).max(20)),
  webhookTimeoutMs: z.coerce.number().int().min(100).max(30000).default(10000),
};

const schema = z.discriminatedUnion('keyBackend', [
  z.object({
    keyBackend: z.literal('kms'),
    tableName: z.string().min(1),
    macKmsKeyId: z.string().min(1),
    serviceName: z.string().default('credential-service'),
    ...webhooks,
  }),
  z.object({
    keyBackend: z.literal('local'),
    tableName: z.string().min(1),
    localMasterKey: z.string().regex(/^[0-9a-f]{64}$/, 'LOCAL_MASTER_KEY must be 32 bytes of hex'),
    serviceName: z.string().default('credential-service'),
    ...webhooks,
  }),
]);

export type Config = Readonly<z.infer<typeof schema>>;

let cached: Config | undefined;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  if (cached && env === process.env) return cached;
  const parsed = schema.safeParse({
    keyBackend: env[ENV.keyBackend] ?? 'kms',
    tableName: env[ENV.tableName],
    macKmsKeyId: env[ENV.macKmsKeyId],
    localMasterKey: env[ENV.localMasterKey],
    serviceName: env[ENV.serviceName],
    webhookQueueUrl: env[ENV.webhookQueueUrl] || undefined,
    webhookAllowLoopback: env[ENV.webhookAllowLoopback] || undefined,
    webhookRetryDelaysSeconds: env[ENV.webhookRetryDelays] || undefined,
    webhookTimeoutMs: env[ENV.webhookTimeoutMs] || undefined,
  });
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${fields}`);
  }
  const config = Object.freeze(parsed.data);
  if (env === process.env) cached = config;
  return config;
}
