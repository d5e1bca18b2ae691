import type { LocalRuntime } from './runtime';

/**
 * What `npm start` prints once everything listens. It ends with the `export BASE_URL=… BASE_API_KEY=…`
 * line the README's Quick start starts from (test/quickstart/local-stack.ts reads it too).
 */
export function banner(rt: Pick<LocalRuntime, 'url' | 'mailViewerUrl' | 'baseApiKey' | 'baseApiKeyGenerated'>, dataDir: string): string {
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
  return lines.join('\n');
}
