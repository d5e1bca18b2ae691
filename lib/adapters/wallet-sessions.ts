import { AssumeRoleCommand, type STSClient } from '@aws-sdk/client-sts';

export interface TemporaryCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

/** Role chaining (Lambda's role assuming another) caps a session at one hour. */
const SESSION_SECONDS = 3600;

/**
 * Credentials of a wallet's session: the function's tenant role assumed with the session tag
 * `wallet_id`, which that role's policy uses to reach only the wallet's partitions and keys (AWS's
 * SaaS "dynamic policy" pattern with ABAC). Handed to SDK clients as a provider: the SDK caches it and
 * asks again five minutes before it expires, so a warm container assumes the role once an hour per
 * wallet it serves.
 */
export class WalletSessions {
  constructor(
    private readonly sts: STSClient,
    private readonly roleArn: string,
    private readonly functionName: string,
  ) {}

  credentials(walletId: string): () => Promise<TemporaryCredentials> {
    return async () => {
      const out = await this.sts.send(
        new AssumeRoleCommand({
          RoleArn: this.roleArn,
          RoleSessionName: `${this.functionName}-w${walletId}`.slice(0, 64),
          Tags: [{ Key: 'wallet_id', Value: walletId }],
          DurationSeconds: SESSION_SECONDS,
        }),
      );
      const c = out.Credentials;
      if (!c?.AccessKeyId || !c.SecretAccessKey) throw new Error('STS AssumeRole returned no credentials');
      return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: c.Expiration };
    };
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
    if (this.clients.size > this.max) {
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
