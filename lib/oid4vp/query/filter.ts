import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/*
 * PE filters are JSON Schema fragments. Same Ajv options as @animo-id/pex's filter evaluation, so a
 * filter means here what it means to PE tooling. Ajv is a production dependency of @animo-id/pex.
 */
const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true, code: { source: false } });
addFormats(ajv);

const compiled = new Map<string, ValidateFunction>();

export type CompiledFilter = { readonly ok: true; readonly validate: ValidateFunction } | { readonly ok: false; readonly message: string };

export function compileFilter(filter: unknown): CompiledFilter {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) return { ok: false, message: 'must be a JSON Schema object' };
  const key = JSON.stringify(filter);
  const cached = compiled.get(key);
  if (cached) return { ok: true, validate: cached };
  try {
    const validate = ajv.compile(filter);
    // Bounded: definitions are few; a tenant cannot grow this without storing definitions.
    if (compiled.size < 1000) compiled.set(key, validate);
    return { ok: true, validate };
  } catch (e) {
    const reason = (e instanceof Error ? e.message : String(e)).replace(/^schema is invalid: /, '').replace(/\bdata\//g, '');
    return { ok: false, message: `is not a valid JSON Schema: ${reason}` };
  }
}

/** Why the value fails the filter (the schema's words, never the value: details are stored). */
export function filterFailure(filter: unknown, value: unknown): string | undefined {
  const compiledFilter = compileFilter(filter);
  if (!compiledFilter.ok) return `the filter ${compiledFilter.message}`;
  if (compiledFilter.validate(value)) return undefined;
  const errors = compiledFilter.validate.errors ?? [];
  return errors.map((e) => `${e.instancePath || 'value'} ${e.message ?? 'fails the filter'}`).join('; ') || 'fails the filter';
}
