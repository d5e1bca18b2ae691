import type { AttemptOutcome } from './retry-policy';

export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly timeoutMs: number;
}

export interface WebhookResult {
  readonly outcome: AttemptOutcome;
  readonly durationMs: number;
  /** The first bytes of the response body, for the tenant's delivery log. */
  readonly responseSnippet?: string;
}

/** Sends one webhook request. Never throws for the receiver's faults: they are outcomes. */
export interface WebhookTransport {
  post(request: WebhookRequest): Promise<WebhookResult>;
}

/** Resolves a host name to its addresses (all of them: each must pass the SSRF check). */
export type Resolver = (hostname: string) => Promise<readonly { address: string; family: number }[]>;
