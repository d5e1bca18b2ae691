import { AppError } from '../../lib/http/errors';

/** The AppError a call is refused with (anything else, or no refusal, fails the test). */
export async function refusalDetail(p: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return { status: err.status, code: err.code, message: err.message };
    throw err;
  }
  throw new Error('expected a refusal');
}

/** As refusalDetail, without the message: `{status, code}`, for exact comparisons. */
export async function refusal(p: Promise<unknown>): Promise<{ status: number; code: string }> {
  const { status, code } = await refusalDetail(p);
  return { status, code };
}
