/**
 * `?wait=SECONDS`: a start or an answer that waits for the run to stop running (to
 * suspend on an ask, or to end) before it answers, for at most that long.
 */
import { ApiError } from './http-error.ts';

/** The longest wait a request may ask for, in seconds. */
export const MAX_WAIT_SECONDS = 60;

/** The `?wait=` of a request in seconds (0 when absent); 400 when it is no number in range. */
export function waitSeconds(text: string | undefined): number {
  if (text === undefined) return 0;
  const seconds = Number(text);
  if (text.trim() === '' || !Number.isFinite(seconds) || seconds < 0 || seconds > MAX_WAIT_SECONDS) {
    throw new ApiError(400, `?wait= takes a number of seconds from 0 to ${MAX_WAIT_SECONDS}, not ${JSON.stringify(text)}`, { field: 'wait' });
  }
  return seconds;
}
