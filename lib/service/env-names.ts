/** Environment variable names shared by the stack, the local runtime and lib/config. */
export const ENV = {
  tableName: 'TABLE_NAME',
  keyBackend: 'KEY_BACKEND', // 'kms' | 'local'
  macKmsKeyId: 'MAC_KMS_KEY_ID',
  /** The DIDComm data keys' KMS key (only functions that declare `dataKeys`). */
  didcommKmsKeyId: 'DIDCOMM_KMS_KEY_ID',
  localMasterKey: 'LOCAL_MASTER_KEY', // hex, local runtime only
  authorizerCacheTtl: 'AUTHORIZER_CACHE_TTL_SECONDS',
  serviceName: 'POWERTOOLS_SERVICE_NAME',
  logLevel: 'POWERTOOLS_LOG_LEVEL',
  webhookQueueUrl: 'WEBHOOK_QUEUE_URL', // = queueUrlEnvName('webhook')
  /** Bulk email: the sender address, and the SES configuration set (optional). */
  emailSender: 'EMAIL_SENDER',
  sesConfigurationSet: 'SES_CONFIGURATION_SET',
  /** 'true' only in the local runtime: webhook targets on loopback are allowed (never private ranges). */
  webhookAllowLoopback: 'WEBHOOK_ALLOW_LOOPBACK',
  /** Comma-separated delays (seconds) before retries 1..n; the count bounds the attempts. */
  webhookRetryDelays: 'WEBHOOK_RETRY_DELAYS_SECONDS',
  webhookTimeoutMs: 'WEBHOOK_TIMEOUT_MS',
  /** Public base URL of the API (did:web identifiers); derived from each request when unset. */
  publicBaseUrl: 'PUBLIC_BASE_URL',
  /** Value of the `service` tag on issuer KMS keys; the functions' IAM is conditioned on it. */
  issuerKeyTag: 'ISSUER_KEY_TAG',
  indyNamespace: 'INDY_NAMESPACE',
  /** The function's tenant role, assumed with the session tag wallet_id for wallet-scoped work (deployed only). */
  tenantRoleArn: 'TENANT_ROLE_ARN',
  /** The function's registry role (tenancy only: wallet creation's reservation writes), assumed with the same tag (deployed only). */
  registryRoleArn: 'REGISTRY_ROLE_ARN',
  /** Prefix of the usage-plan key values (per-tenant throttling); the tenants' plan name (tenancy only). */
  usageKeyPrefix: 'USAGE_KEY_PREFIX',
  usagePlanName: 'USAGE_PLAN_NAME',
  /** Per-wallet limits on DIDs (each is a KMS key: cost, and KMS's shared CreateKey rate). */
  maxDidsPerWallet: 'MAX_DIDS_PER_WALLET',
  maxDidCreationsPerMinute: 'MAX_DID_CREATIONS_PER_MINUTE',
  /**
   * The publication agreement (TAA). Deployed: TAA_FILE names a JSON file {text, version, aml, amlVersion}
   * bundled with the DID function (relative to the code root). Locally also as TAA_TEXT, TAA_VERSION,
   * TAA_AML (JSON {name: description}), TAA_AML_VERSION.
   */
  taaFile: 'TAA_FILE',
  taaText: 'TAA_TEXT',
  taaVersion: 'TAA_VERSION',
  taaAml: 'TAA_AML',
  taaAmlVersion: 'TAA_AML_VERSION',
  /** Folder of the API reference renderer's files, relative to the code root (default: the code root itself). */
  docsAssetsDir: 'DOCS_ASSETS_DIR',
} as const;
