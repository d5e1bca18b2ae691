import { startLocalRuntime } from './runtime';

/** `npm start`: the service on this machine, no AWS account needed. */
const port = Number(process.env.PORT ?? 3000);
const dataDir = process.env.LOCAL_DATA_DIR ?? '.local-data';

const rt = await startLocalRuntime({ port, dataDir, baseApiKey: process.env.BASE_API_KEY || undefined });

const lines = [
  '',
  `Credential service (local) listening on ${rt.url}`,
  `  OpenAPI document:   ${rt.url}/openapi.json`,
  `  API reference:      ${rt.url}/docs`,
  `  Mail viewer (SES):  ${rt.mailViewerUrl}`,
  `  Webhooks:           delivered by the local worker; loopback receivers (http://127.0.0.1:…) are allowed`,
  `  OID4VCI issuers:    ${rt.url}/oid4vci/<wallet_id> (metadata at ${rt.url}/.well-known/openid-credential-issuer/oid4vci/<wallet_id>)`,
  `  Status lists:       ${rt.url}/status-lists/<wallet_id>/<definition_id>/<list>/{ietf|w3c} (public, signed)`,
  `  Data folder:        ${dataDir} (delete it to start afresh)`,
  '',
];
if (rt.baseApiKeyGenerated) {
  lines.push(
    'A base (super-admin) API key was generated. It is shown ONCE and kept only as an HMAC:',
    '',
    `    ${rt.baseApiKey}`,
    '',
    'Keep it; set BASE_API_KEY to choose your own instead.',
  );
} else if (rt.baseApiKey) {
  lines.push('The base (super-admin) API key is the value of BASE_API_KEY.');
} else {
  lines.push('The base (super-admin) API key is the one printed on first start (set BASE_API_KEY to replace it).');
}
lines.push(
  '',
  'Authenticate with the x-api-key header, for example:',
  `  curl -s -X POST ${rt.url}/api/subwallet/create -H "x-api-key: $BASE_KEY" -H 'content-type: application/json' -d '{"wallet_name":"acme"}'`,
  '',
  'Ctrl-C stops everything.',
  '',
);
console.log(lines.join('\n'));

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping…`);
  await rt.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
