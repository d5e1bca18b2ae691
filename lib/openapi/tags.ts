/**
 * The route table's tags, in the order a new tenant calls them, each saying what comes before and
 * after: /docs shows the groups in this order. Every tag of lib/service/routes.ts must be here
 * (test/unit/openapi-docs.test.ts).
 */
export const TAGS: readonly { readonly name: string; readonly description: string }[] = [
  {
    name: 'Subwallets',
    description:
      '**Step 1 (platform team, base key).** Create a subwallet (tenant) for each customer. Its `wallet_id` is a JSON number here; its `token` acts as the wallet for one hour. Next: an API key for it.',
  },
  {
    name: 'API keys',
    description:
      '**Step 2 (base key).** Create the wallet\'s API key (shown once) and hand it to the tenant; every `/api/v1` call takes it in `x-api-key`. Revoke by `key_id` (kept, marked revoked) or by `name` (deleted).',
  },
  {
    name: 'Wallet',
    description: "**Step 3 (wallet key).** Check the key works: the calling wallet, with its `public_ref` (the name of the wallet in public URLs), and its own keys.",
  },
  {
    name: 'DIDs',
    description:
      '**Step 4.** Create the DID the wallet issues and verifies with (`{"method":"key"}` for a did:key; did:web and did:jwk work with holder wallets too), accept the publication agreement (TAA, next group) and make the DID public with `set-public-did`: offers, status lists and presentation requests default to it.',
  },
  {
    name: 'TAA',
    description: '**Before `set-public-did`.** Read the publication agreement (`fetch-taa`) and accept its current version with a mechanism from its list (`accept-taa`). A deployment without an agreement needs neither.',
  },
  {
    name: 'OID4VCI',
    description:
      '**Step 5: issue.** Describe what the wallet issues (a supported credential, e.g. an SD-JWT VC with its claims and which are selectively disclosable), then `issue` an offer: its `credential_offer_uri` (a QR code for a phone wallet) carries the pre-authorized code. Follow the exchange from `offer` to `issued`. Bind a status list (below) before the offer if the credential must be revocable.',
  },
  {
    name: 'OID4VCI issuer',
    description: "**What holder wallets call** (no key): each wallet's credential issuer at `/oid4vci/{public_ref}` — metadata, the offer by reference, token (pre-authorized code, PIN), nonce, credential and notification endpoints.",
  },
  {
    name: 'Status lists',
    description:
      '**Revocation.** Create a definition for a supported credential *before* offering it; each credential issued then carries an entry. Revoke (or suspend) it by exchange id; the published list follows within seconds.',
  },
  {
    name: 'Status lists (public)',
    description: 'What verifiers fetch (no key): the signed lists, as an IETF Token Status List or a W3C Bitstring Status List credential, with ETag/304 and a 60 s cache lifetime.',
  },
  {
    name: 'OID4VP',
    description:
      '**Step 6: verify.** Store what to ask for (a Presentation Exchange definition, or send a DCQL query), create a request and show its `request_uri` (a QR code); read the presentation (`presentation-valid` or `presentation-invalid`, with the disclosed claims) once the wallet has answered. Credentials of issuers other than the wallet\'s own DIDs need the trusted-issuers setting.',
  },
  {
    name: 'OID4VP verifier',
    description: "**What holder wallets call** (no key): the signed request object (fetched once) and the `direct_post` response endpoint of each wallet's verifier.",
  },
  {
    name: 'DIDComm',
    description:
      "**Connect with Aries agents (DIDComm v1).** Create an Out-of-Band invitation and show its `invitation_url` (or QR code) to a holder's agent (Credo, ACA-Py); the connection appears under connections once its DID Exchange completes, and basic messages in both directions under messages.",
  },
  {
    name: 'DIDComm (public)',
    description: "**What other agents call** (no key): each wallet's DIDComm endpoint, named in its invitations and did:peer documents. Envelopes are stored and queued at once (202) and handled in order per connection.",
  },
  {
    name: 'JSON-LD',
    description:
      "**Your own JSON-LD vocabulary.** Store a context file once under a file name of your choice; it is published at `/context/<public_ref>:<context_file_id>` (the `url` in the answer) for any JSON-LD processor to fetch, and never changes: a new version is a new file name. A context may import the bundled W3C contexts and your other context files, never a URL on the network.",
  },
  {
    name: 'JSON-LD (public)',
    description: '**What JSON-LD processors fetch** (no key): a context file by its public id (`application/ld+json`, cacheable for a year: it never changes), and one wallet\'s list by its `public_ref`.',
  },  {
    name: 'AnonCreds',
    description:
      "**AnonCreds schemas and credential definitions** (not in the contract; ACA-Py's field names). Both are published under the wallet's public did:web DID with the did:web AnonCreds method. A schema is made at once; a credential definition's keys take seconds, so it starts in state `wait` and the worker finishes it (`anoncreds.credential_definition.finished` event).",
  },
  {
    name: 'AnonCreds (public)',
    description: '**What holders and verifiers resolve** (no key): schemas and credential definitions at `<did:web service endpoint>/schema/<resource id>` and `/credDef/<resource id>`, as `{resource, resourceMetadata}`; the resource id is the hash of the object.',
  },

  {
    name: 'Email',
    description: '**Offers to many people.** Mail each recipient their own offer (from the public DID) in one request; follow each recipient\'s outcome.',
  },
  {
    name: 'Webhooks',
    description:
      '**Events.** Set target URLs to receive signed events (Standard Webhooks) for every state change above; verify them with the wallet\'s secret; ping a target, inspect deliveries and redeliver.',
  },
  {
    name: 'DID resolution',
    description: "Public (no key): DID documents of the service's published DIDs (Universal Resolver style) and did:web documents.",
  },
  {
    name: 'Meta',
    description: 'This description (`/openapi.json`) and this page.',
  },
];
