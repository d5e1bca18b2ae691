/**
 * ContextFiles.put's paths the HTTP tests cannot reach cheaply: the wallet's quota (500 files) and a
 * store of the same id that wins the race between the read and the write.
 */
import { ContextFiles, contextFileKeys } from '../../lib/jsonld/context-files';
import { tenantScope } from '../../lib/store/keys';
import type { WriteOp } from '../../lib/store/port';
import { MemoryStore } from '../helpers/memory-store';

const scope = tenantScope('7');
const FILE = { '@context': { Employee: 'https://acme.example/vocab#Employee' } };
const files = (store: MemoryStore) => new ContextFiles({ store, refs: { of: async () => 'ref7' }, validate: async () => undefined });

test('a wallet at its 500 files gets 409 context_file_quota_exceeded, and nothing is stored', async () => {
  const store = new MemoryStore();
  await store.write([{ type: 'put', item: { ...contextFileKeys.quota(scope), type: 'quota', count: 500 } }]);
  await expect(files(store).put(scope, 'http://127.0.0.1:3000', 'one-more.jsonld', FILE)).rejects.toMatchObject({ status: 409, code: 'context_file_quota_exceeded' });
  expect(await store.get(contextFileKeys.file(scope, 'one-more.jsonld'))).toBeUndefined();
  // One below the bound is accepted.
  await store.write([{ type: 'put', item: { ...contextFileKeys.quota(scope), type: 'quota', count: 499 } }]);
  await expect(files(store).put(scope, 'http://127.0.0.1:3000', 'one-more.jsonld', FILE)).resolves.toMatchObject({ id: 'ref7:one-more.jsonld' });
});

test('stored concurrently under the same id: the same content is the same answer, other content a 409', async () => {
  for (const [theirs, expected] of [
    [FILE, { id: 'ref7:raced.jsonld' }],
    [{ '@context': { Other: 'https://other.example/O' } }, { status: 409, code: 'context_file_exists' }],
  ] as const) {
    const store = new MemoryStore();
    const write = store.write.bind(store);
    // The other request's file lands between our read and our write.
    store.write = async (ops: readonly WriteOp[]) => {
      store.write = write;
      await files(store).put(scope, 'http://127.0.0.1:3000', 'raced.jsonld', theirs as typeof FILE);
      return write(ops);
    };
    const ours = files(store).put(scope, 'http://127.0.0.1:3000', 'raced.jsonld', FILE);
    if ('status' in expected) await expect(ours).rejects.toMatchObject(expected);
    else await expect(ours).resolves.toMatchObject(expected);
  }
});
