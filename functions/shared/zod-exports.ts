/**
 * `zod`'s exports as the Lambda bundles see them (BUNDLE_ALIASES, through zod-bundle-entry.ts): every export of zod's own entry
 * (node_modules/zod/v4/classic/external.js) except `locales`. The `@openid4vc/*` libraries
 * `import z from 'zod'`; esbuild cannot shake a default-imported namespace, so all 40-odd locales
 * (264 KB minified, measured) would ship in every bundle that uses them. English, the default, is
 * registered by the schemas themselves (classic/schemas.js) and stays.
 */
export * as core from './zod-core-exports';
export * from '../../node_modules/zod/v4/classic/schemas.js';
export * from '../../node_modules/zod/v4/classic/checks.js';
export * from '../../node_modules/zod/v4/classic/errors.js';
export * from '../../node_modules/zod/v4/classic/parse.js';
export * from '../../node_modules/zod/v4/classic/compat.js';
export {
  globalRegistry,
  registry,
  config,
  memoizer,
  $output,
  $input,
  $brand,
  clone,
  regexes,
  treeifyError,
  prettifyError,
  formatError,
  flattenError,
  TimePrecision,
  util,
  NEVER,
  INVALID,
  toZod,
  compile,
  withParser,
  ZodCompileAsyncError,
  ZodCompileUnsupportedError,
  getDiscriminatedOption,
} from './zod-core-exports';
export { toJSONSchema } from '../../node_modules/zod/v4/core/json-schema-processors.js';
export { fromJSONSchema } from '../../node_modules/zod/v4/classic/from-json-schema.js';
export { deepPartial } from '../../node_modules/zod/v4/classic/deep-partial.js';
export { input, output } from '../../node_modules/zod/v4/classic/in-out.js';
export { ZodISODateTime, ZodISODate, ZodISOTime, ZodISODuration } from '../../node_modules/zod/v4/classic/iso.js';
export * as iso from '../../node_modules/zod/v4/classic/iso.js';
export * as coerce from '../../node_modules/zod/v4/classic/coerce.js';
