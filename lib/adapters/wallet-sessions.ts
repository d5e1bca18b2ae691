import { AssumeRoleCommand, type STSClient } from '@aws-sdk/client-sts';
import { ACCESS_TAGS } from '../service/access';

export interface TemporaryCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

/** Role chaining (Lambda's role assuming another) caps a session at one hour. */
const SESSION_SECONDS = 3600;

/** Refresh a session this long before it expires (what the SDK's own credential cache does). */
const REFRESH_BEFORE_MS = 5 * 60_000;

/**
 * Credentials of a wallet's session: the function's tenant role assumed with the session tag
 * `wallet_id`, which that role's policy uses to reach only the wallet's partitions and keys (AWS's
 * SaaS "dynamic policy" pattern with ABAC). One session per wallet, shared by every client of that
 * wallet (DynamoDB, KMS) and kept until five minutes before it expires: a warm container assumes the
 * role once an hour per wallet it serves. Bounded, oldest first out.
 */
export class WalletSessions {
  private readonly cache = new Map<string, Promise<TemporaryCredentials>>();

  constructor(
    private readonly sts: STSClient,
    private readonly roleArn: string,
    private readonly functionName: string,
    private readonly now: () => number = Date.now,
    private readonly maxWallets = 1000,
  ) {}

  credentials(walletId: string): () => Promise<TemporaryCredentials> {
    return async () => {
      const cached = this.cache.get(walletId);
      if (cached) {
        const creds = await cached.catch(() => undefined);
        if (creds && (!creds.expiration || creds.expiration.getTime() - this.now() > REFRESH_BEFORE_MS)) return creds;
        if (this.cache.get(walletId) !== cached) return this.credentials(walletId)(); // another caller refreshed meanwhile
      }
      const fresh = this.assume(walletId);
      this.cache.delete(walletId);
      this.cache.set(walletId, fresh);
      fresh.catch(() => this.cache.get(walletId) === fresh && this.cache.delete(walletId));
      if (this.cache.size > this.maxWallets) this.cache.delete(this.cache.keys().next().value!);
      return fresh;
    };
  }

  private async assume(walletId: string): Promise<TemporaryCredentials> {
    const out = await this.sts.send(
      new AssumeRoleCommand({
        RoleArn: this.roleArn,
        RoleSessionName: `${this.functionName}-w${walletId}`.slice(0, 64),
        Tags: [{ Key: ACCESS_TAGS.wallet, Value: walletId }],
        DurationSeconds: SESSION_SECONDS,
      }),
    );
    const c = out.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey) throw new Error('STS AssumeRole returned no credentials');
    return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: c.Expiration };
  }
}

/**
 * One SDK client per principal — the function's own role (`null`) or a wallet's session — reused
 * across warm invocations. Bounded, least recently used out; evicted clients are dropped, not
 * destroyed, because session clients share their HTTP handler (and its sockets) with the base client.
 */
export class ClientsByWallet<C> {
  private readonly clients = new Map<string | null, C>();

  constructor(
    private readonly make: (wallet: string | null) => C,
    private readonly max = 256,
  ) {}

  get(wallet: string | null): C {
    let client = this.clients.get(wallet);
    if (client !== undefined) {
      this.clients.delete(wallet);
      this.clients.set(wallet, client);
      return client;
    }
    client = this.make(wallet);
    this.clients.set(wallet, client);
    if (this.clients.size - (this.clients.has(null) ? 1 : 0) > this.max) {
      for (const k of this.clients.keys()) {
        if (k !== null) {
          this.clients.delete(k);
          break;
        }
      }
    }
    return client;
  }
}
