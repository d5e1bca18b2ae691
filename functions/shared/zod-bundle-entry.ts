/** `zod` in the Lambda bundles: zod-exports.ts, and the same as the default export (what the libraries import). */
export * from './zod-exports';
import * as z from './zod-exports';
export { z, z as default };
