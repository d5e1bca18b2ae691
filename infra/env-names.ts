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
  webhookQueueUrl: 'WEBHOOK_QUEUE_URL', // = queueUrlEnvName('webhook')
  /** 'true' only in the local runtime: webhook targets on loopback are allowed (never private ranges). */
  webhookAllowLoopback: 'WEBHOOK_ALLOW_LOOPBACK',
  /** Comma-separated delays (seconds) before retries 1..n; the count bounds the attempts. */
  webhookRetryDelays: 'WEBHOOK_RETRY_DELAYS_SECONDS',
  webhookTimeoutMs: 'WEBHOOK_TIMEOUT_MS',
} as const;
