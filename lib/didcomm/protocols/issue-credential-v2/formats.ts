/**
 * The seam between the protocol (RFC 0453, format-agnostic) and a credential format (RFC 0593
 * `ld_proof` here; AnonCreds plugs its `anoncreds/*` formats in the same way). Two halves, because
 * they run in different functions: the protocol half is pure and light (the inbound DIDComm worker
 * checks a holder's request with it), the issuing half signs (the issuing worker, which carries the
 * format's signing stack).
 */

/** A holder's request checked against our offer: what to issue, or why not (sent as a problem report). */
export type RequestCheck = { readonly ok: true; readonly detail: unknown } | { readonly ok: false; readonly problem: string };

export interface CredentialFormat {
  /** The exchange's `format` (ACA-Py's name: `ld_proof`, `anoncreds`). */
  readonly name: string;
  /** RFC 0453 attachment format identifiers of the offer, the request and the credential. */
  readonly offerFormat: string;
  readonly requestFormat: string;
  readonly issueFormat: string;
  /** Checks the request's attachment against the offered one; pure (no I/O): it runs in the inbound worker. */
  checkRequest(offer: unknown, request: unknown): RequestCheck;
}

/** What the issuing half hands back: the credential attachment, and the format-specific record to keep. */
export interface Issued {
  readonly attachment: unknown;
  readonly record: Readonly<Record<string, unknown>>;
}

/** The exchange as the issuing half needs it. */
export interface ExchangeToIssue {
  readonly credential_exchange_id: string;
  readonly offer: unknown;
  readonly request: unknown;
  /** Format-specific settings kept with the exchange at offer time (ld_proof: the issuer DID, the proof choice). */
  readonly format_options: Readonly<Record<string, unknown>>;
}

/** A refusal the holder is told of (a problem report), as opposed to a fault of ours (retried). */
export class IssueRefused extends Error {
  constructor(
    readonly problemCode: string,
    message: string,
  ) {
    super(message);
    this.name = 'IssueRefused';
  }
}
