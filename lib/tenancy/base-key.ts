import { gsi1, keys } from '../store/keys';
import { ConditionFailedError, type ItemStore } from '../store/port';
import type { SecretDeriver } from '../secrets/port';
import { LOOKUP_PATTERN, generateApiKey, isLookupCandidate, macApiKey } from './api-key-format';
import { SUPERADMIN_ROLE } from './authenticate';

export type BaseKeyResult = { readonly created: true; readonly apiKey: string } | { readonly created: false };

/**
 * The super-admin base key. There is exactly one; it is stored only as an HMAC. `issue` creates it
 * when none exists (racing cold starts are settled by a conditional write), `rotate` replaces it,
 * and `install` sets a key the operator chose (BASE_API_KEY in the local runtime).
 */
export class BaseKeys {
  constructor(
    private readonly store: ItemStore,
    private readonly secrets: SecretDeriver,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async issue(): Promise<BaseKeyResult> {
    const apiKey = generateApiKey();
    try {
      await this.store.write([{ type: 'put', condition: 'not_exists', item: await this.item(apiKey) }]);
    } catch (err) {
      if (err instanceof ConditionFailedError) return { created: false };
      throw err;
    }
    return { created: true, apiKey };
  }

  async rotate(): Promise<string> {
    const apiKey = generateApiKey();
    await this.install(apiKey);
    return apiKey;
  }

  async install(apiKey: string): Promise<void> {
    if (!isLookupCandidate(apiKey) || !LOOKUP_PATTERN.test(apiKey)) {
      throw new Error('a chosen base key must be 32–256 visible ASCII characters (or a valid cisk_ key); omit it to have one generated');
    }
    await this.store.write([{ type: 'put', item: await this.item(apiKey) }]);
  }

  private async item(apiKey: string) {
    const mac = macApiKey(await this.secrets.derive('api-key-mac/v1'), apiKey);
    return {
      ...keys.baseKey,
      ...gsi1.apiKeyByMac(mac),
      type: 'base_key',
      key_id: 'base',
      roles: [SUPERADMIN_ROLE],
      mac,
      created_at: this.now().toISOString(),
    };
  }
}
