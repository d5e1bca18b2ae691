import { ConflictException, CreateApiKeyCommand, CreateUsagePlanKeyCommand, GetApiKeysCommand, GetUsagePlansCommand, type APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { walletUsageKey, type UsageKeys } from '../service/usage-keys';

/** {@link UsageKeys} on API Gateway: one API key per wallet, in the tenants' usage plan (found by its name). */
export class ApiGatewayUsageKeys implements UsageKeys {
  private planId: Promise<string> | undefined;

  constructor(
    private readonly client: APIGatewayClient,
    private readonly usagePlanName: string,
    private readonly prefix: string,
  ) {}

  private usagePlanId(): Promise<string> {
    this.planId ??= (async () => {
      let position: string | undefined;
      do {
        const page = await this.client.send(new GetUsagePlansCommand({ limit: 500, position }));
        const plan = page.items?.find((p) => p.name === this.usagePlanName);
        if (plan?.id) return plan.id;
        position = page.position;
      } while (position);
      throw new Error(`no usage plan named ${this.usagePlanName}`);
    })();
    this.planId.catch(() => (this.planId = undefined));
    return this.planId;
  }

  async register(walletId: string): Promise<void> {
    const value = walletUsageKey(this.prefix, walletId);
    const name = value;
    let keyId: string | undefined;
    try {
      keyId = (await this.client.send(new CreateApiKeyCommand({ name, value, enabled: true, description: `Throttling bucket of wallet ${walletId}` }))).id;
    } catch (err) {
      if (!(err instanceof ConflictException)) throw err;
    }
    // Created by an earlier attempt that stopped before joining the plan: find it by its name.
    keyId ??= (await this.client.send(new GetApiKeysCommand({ nameQuery: name, limit: 2 }))).items?.find((k) => k.name === name)?.id;
    if (!keyId) throw new Error(`API Gateway has no usage key ${name}`);
    try {
      await this.client.send(new CreateUsagePlanKeyCommand({ usagePlanId: await this.usagePlanId(), keyId, keyType: 'API_KEY' }));
    } catch (err) {
      if (!(err instanceof ConflictException)) throw err; // already in the plan
    }
  }
}
