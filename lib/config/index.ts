import { z } from 'zod';
import { ENV } from '../../infra/env-names';

/** The one place that reads process.env: parsed once, typed, frozen. */
const schema = z.discriminatedUnion('keyBackend', [
  z.object({
    keyBackend: z.literal('kms'),
    tableName: z.string().min(1),
    macKmsKeyId: z.string().min(1),
    serviceName: z.string().default('credential-service'),
  }),
  z.object({
    keyBackend: z.literal('local'),
    tableName: z.string().min(1),
    localMasterKey: z.string().regex(/^[0-9a-f]{64}$/, 'LOCAL_MASTER_KEY must be 32 bytes of hex'),
    serviceName: z.string().default('credential-service'),
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
  });
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${fields}`);
  }
  const config = Object.freeze(parsed.data);
  if (env === process.env) cached = config;
  return config;
}
