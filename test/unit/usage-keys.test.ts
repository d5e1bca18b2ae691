import { APIGatewayClient, ConflictException, CreateApiKeyCommand, CreateUsagePlanKeyCommand, GetApiKeysCommand, GetUsagePlansCommand } from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { ApiGatewayUsageKeys } from '../../lib/adapters/apigateway-usage-keys';
import { platformUsageKey, walletUsageKey } from '../../lib/service/usage-keys';

const api = mockClient(APIGatewayClient);
beforeEach(() => api.reset());
const conflict = () => new ConflictException({ message: 'exists', $metadata: {} });

describe('per-tenant throttling keys on API Gateway', () => {
  test("a wallet's key is created with its derived value and joins the tenants' plan, found by name once", async () => {
    api.on(GetUsagePlansCommand).resolvesOnce({ items: [{ id: 'p-other', name: 'Other-tenants' }], position: 'next' }).resolves({ items: [{ id: 'p1', name: 'Stack-tenants' }] });
    api.on(CreateApiKeyCommand).resolves({ id: 'k1' });
    api.on(CreateUsagePlanKeyCommand).resolves({});
    const keys = new ApiGatewayUsageKeys(new APIGatewayClient({ region: 'eu-west-1' }), 'Stack-tenants', 'Stack');
    await keys.register('42');
    await keys.register('43');
    expect(api.commandCalls(CreateApiKeyCommand).map((c) => c.args[0].input)).toEqual([
      expect.objectContaining({ name: walletUsageKey('Stack', '42'), value: walletUsageKey('Stack', '42'), enabled: true }),
      expect.objectContaining({ value: walletUsageKey('Stack', '43') }),
    ]);
    expect(api.commandCalls(CreateUsagePlanKeyCommand).map((c) => c.args[0].input)).toEqual([
      { usagePlanId: 'p1', keyId: 'k1', keyType: 'API_KEY' },
      { usagePlanId: 'p1', keyId: 'k1', keyType: 'API_KEY' },
    ]);
    expect(api.commandCalls(GetUsagePlansCommand)).toHaveLength(2); // two pages, then cached
  });

  test('a retry after a partial registration finds the existing key and accepts that it is already in the plan', async () => {
    api.on(GetUsagePlansCommand).resolves({ items: [{ id: 'p1', name: 'Stack-tenants' }] });
    api.on(CreateApiKeyCommand).rejects(conflict());
    api.on(GetApiKeysCommand).resolves({ items: [{ id: 'k9', name: walletUsageKey('Stack', '7') }] });
    api.on(CreateUsagePlanKeyCommand).rejects(conflict());
    await new ApiGatewayUsageKeys(new APIGatewayClient({ region: 'eu-west-1' }), 'Stack-tenants', 'Stack').register('7');
    expect(api.commandCalls(GetApiKeysCommand)[0]!.args[0].input).toMatchObject({ nameQuery: walletUsageKey('Stack', '7') });
    expect(api.commandCalls(CreateUsagePlanKeyCommand)[0]!.args[0].input).toMatchObject({ keyId: 'k9' });
  });

  test('other failures are errors (the subwallet is then not created), and a missing plan says so', async () => {
    api.on(GetUsagePlansCommand).resolves({ items: [] });
    api.on(CreateApiKeyCommand).resolves({ id: 'k1' });
    await expect(new ApiGatewayUsageKeys(new APIGatewayClient({ region: 'eu-west-1' }), 'Stack-tenants', 'Stack').register('1')).rejects.toThrow(/no usage plan named Stack-tenants/);
    api.reset();
    api.on(CreateApiKeyCommand).rejects(Object.assign(new Error('slow down'), { name: 'TooManyRequestsException' }));
    await expect(new ApiGatewayUsageKeys(new APIGatewayClient({ region: 'eu-west-1' }), 'Stack-tenants', 'Stack').register('1')).rejects.toThrow('slow down');
  });

  test('key values are what API Gateway accepts (at least 20 characters) and never collide between wallets or with the platform', () => {
    const values = ['1', '12', '123456789012345'].map((w) => walletUsageKey('S', w));
    for (const v of [...values, platformUsageKey('S')]) expect(v.length).toBeGreaterThanOrEqual(20);
    expect(new Set([...values, platformUsageKey('S')]).size).toBe(4);
  });
});
