import { startLocalRuntime } from './runtime';

/** `npm start`: the service on this machine, no AWS account needed. */
const port = Number(process.env.PORT ?? 3000);
const dataDir = process.env.LOCAL_DATA_DIR ?? '.local-data';
/** The mail viewer's port is fixed (bookmarkable), not a free one picked at each start. */
const DEFAULT_MAIL_VIEWER_PORT = 8005;
const mailViewerPort = Number(process.env.MAIL_VIEWER_PORT || DEFAULT_MAIL_VIEWER_PORT);
for (const [name, value] of [['PORT', port], ['MAIL_VIEWER_PORT', mailViewerPort]] as const) {
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    console.error(`${name} must be a TCP port number (1-65535)`);
    process.exit(2);
  }
}

const rt = await startLocalRuntime({ port, dataDir, mailViewerPort, baseApiKey: process.env.BASE_API_KEY || undefined });

const lines = [
  '',
  `Credential service (local) listening on ${rt.url}`,
  `  OpenAPI document:   ${rt.url}/openapi.json`,
  `  API reference:      ${rt.url}/docs`,
  `  Mail viewer (SES):  ${rt.mailViewerUrl} (MAIL_VIEWER_PORT; mail is kept in the data folder)`,
  `  Webhooks:           delivered by the local worker; loopback receivers (http://127.0.0.1:…) are allowed`,
  `  OID4VCI issuers:    ${rt.url}/oid4vci/<public_ref> (metadata at ${rt.url}/.well-known/openid-credential-issuer/oid4vci/<public_ref>)`,
  `  Status lists:       ${rt.url}/status-lists/<public_ref>/<definition_id>/<list>/{ietf|w3c} (public, signed)`,
  `  Data folder:        ${dataDir} (delete it to start afresh)`,
  '',
];
if (rt.baseApiKeyGenerated) {
  lines.push('A base (super-admin) API key was generated. It is shown ONCE and kept only as an HMAC: keep it.');
} else if (rt.baseApiKey) {
  lines.push('The base (super-admin) API key is the value of BASE_API_KEY.');
}
lines.push('', 'In the terminal you run the Quick start (README.md) or curl in, set:', '');
if (rt.baseApiKey) {
  lines.push(`    export BASE_URL=${rt.url} BASE_API_KEY=${rt.baseApiKey}`);
} else {
  lines.push(
    `    export BASE_URL=${rt.url} BASE_API_KEY=<the key printed on the first start>`,
    '',
    `Lost it? Stop, delete ${dataDir} and start again, or start with BASE_API_KEY set to a key of your own (32-256 visible ASCII characters).`,
  );
}
lines.push(
  '',
  'Authenticate with the x-api-key header, for example:',
  `  curl -s -X POST "$BASE_URL/api/subwallet/create" -H "x-api-key: $BASE_API_KEY" -H 'content-type: application/json' -d '{"wallet_name":"acme"}'`,
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
