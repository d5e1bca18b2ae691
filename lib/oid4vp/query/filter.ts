import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';

/**
 * A tenant's patterns run on values a wallet sends, so they are compiled by RE2 (re2js, a pure-JS
 * port): matching time grows linearly with the input, never exponentially as with a backtracking
 * engine (`^(a+)+$` against 'a'×27+'!' takes seconds in V8's engine, milliseconds here). What RE2
 * cannot evaluate in linear time (backreferences, lookaround) is refused when the definition is
 * stored. Linear is not free: the program size and the tested length are bounded too.
 */
export const PATTERN_LIMITS = {
  /** RE2's measure of a compiled pattern's cost (`programSize()`); `^[A-Z]{2}\d{6}$` is 12. */
  programSize: 1000,
  /** A longer string is not tested: the filter fails (fail closed). */
  inputLength: 10_000,
} as const;

class UnsupportedPatternError extends Error {}
class PatternInputTooLongError extends Error {}

/** What RE2 cannot express, found before translating (re2js's translation would read `\k<name>` as the letter k). */
function nonLinearSyntax(pattern: string): string | null {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      if (/^[1-9k]$/.test(pattern[i + 1] ?? '')) return 'uses a backreference';
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
    } else if (c === '(' && /^\?(?:[=!]|<[=!])/.test(pattern.slice(i + 1, i + 4))) {
      return 'uses a lookahead or lookbehind';
    }
  }
  return null;
}

/**
 * ajv's `code.regExp` engine (`(pattern, flags) => {test}`). The pattern must first be a valid
 * ECMA-262 regular expression (JSON Schema's dialect; compiling one is linear), then RE2 compiles it.
 */
function re2Engine(pattern: string): { test(s: string): boolean; toString(): string } {
  const refuse = (why: string) => new UnsupportedPatternError(`pattern ${JSON.stringify(pattern)} ${why}`);
  try {
    new RegExp(pattern, 'u');
  } catch (e) {
    throw refuse(`is not a valid regular expression: ${(e as Error).message}`);
  }
  const nonLinear = nonLinearSyntax(pattern);
  if (nonLinear) throw refuse(`${nonLinear}, which the linear-time engine (RE2) cannot evaluate`);
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (e) {
    throw refuse(`cannot be compiled by the linear-time engine (RE2): ${(e as Error).message}`);
  }
  if (re.programSize() > PATTERN_LIMITS.programSize) throw refuse(`is too large for the linear-time engine (program size ${re.programSize()}, at most ${PATTERN_LIMITS.programSize})`);
  return {
    test: (s: string) => {
      if (s.length > PATTERN_LIMITS.inputLength) throw new PatternInputTooLongError();
      return re.test(s);
    },
    toString: () => `re2:${pattern}`,
  };
}
re2Engine.code = 're2js RE2JS.compile';

/*
 * PE filters are JSON Schema fragments. Same Ajv options as @animo-id/pex's filter evaluation (so a
 * filter means here what it means to PE tooling), but patterns go to RE2. Formats are ajv-formats'
 * own fixed expressions, not the tenant's.
 */
const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true, code: { source: false, regExp: re2Engine } });
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
    if (e instanceof UnsupportedPatternError) return { ok: false, message: e.message };
    const reason = (e instanceof Error ? e.message : String(e)).replace(/^schema is invalid: /, '').replace(/\bdata\//g, '');
    return { ok: false, message: `is not a valid JSON Schema: ${reason}` };
  }
}

/** Why the value fails the filter (the schema's words, never the value: details are stored). */
export function filterFailure(filter: unknown, value: unknown): string | undefined {
  const compiledFilter = compileFilter(filter);
  if (!compiledFilter.ok) return `the filter ${compiledFilter.message}`;
  let valid: boolean;
  try {
    valid = compiledFilter.validate(value) as boolean;
  } catch (e) {
    if (e instanceof PatternInputTooLongError) return `a string longer than ${PATTERN_LIMITS.inputLength} characters is not tested against a pattern`;
    throw e;
  }
  if (valid) return undefined;
  const errors = compiledFilter.validate.errors ?? [];
  return errors.map((e) => `${e.instancePath || 'value'} ${e.message ?? 'fails the filter'}`).join('; ') || 'fails the filter';
}
