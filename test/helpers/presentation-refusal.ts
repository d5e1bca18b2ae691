import { PresentationInvalidError } from '../../lib/oid4vp/verification/types';

/** The refusal a verification step throws; any other outcome fails the test. */
export function refusal(fn: () => unknown): PresentationInvalidError {
  try {
    fn();
  } catch (e) {
    if (e instanceof PresentationInvalidError) return e;
    throw e;
  }
  throw new Error('expected a PresentationInvalidError');
}
