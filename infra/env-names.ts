/** Environment variable names shared by the stack, the local runtime and lib/config. */
export const ENV = {
  tableName: 'TABLE_NAME',
  keyBackend: 'KEY_BACKEND', // 'kms' | 'local'
  macKmsKeyId: 'MAC_KMS_KEY_ID',
  localMasterKey: 'LOCAL_MASTER_KEY', // hex, local runtime only
  authorizerCacheTtl: 'AUTHORIZER_CACHE_TTL_SECONDS',
  serviceName: 'POWERTOOLS_SERVICE_NAME',
  logLevel: 'POWERTOOLS_LOG_LEVEL',
  stage: 'STAGE_NAME',
} as const;
