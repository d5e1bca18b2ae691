import jsonld from 'jsonld';
import { callerErrorOf, offlineDocumentLoader, type ContextLookup } from './loader';

/**
 * JSON-LD's own context processing, offline: an invalid term definition, a protected term redefined,
 * a context it imports that is neither bundled nor one of the wallet's files — each a 400 naming it.
 */
export async function validateContext(context: unknown, ownFiles: ContextLookup): Promise<void> {
  const documentLoader = offlineDocumentLoader({ contexts: ownFiles });
  try {
    const initial = await jsonld.processContext(null, null, { documentLoader });
    await jsonld.processContext(initial, context, { documentLoader });
  } catch (err) {
    throw callerErrorOf(err);
  }
}
