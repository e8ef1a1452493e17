import { OutsideServiceError } from '../../errors.js';

/**
 * The named failures of a package index (upstream or the time machine itself):
 * - `upstream-unreachable`: refused, reset, no such host, or the connection broke mid-answer;
 * - `upstream-timeout`: no complete answer within the time limit (nor a byte of a file for as long);
 * - `upstream-status-<N>`: an HTTP status other than 200 and 304 (404: no such project);
 * - `upstream-invalid`: an answer that is not a simple-index page (content type, JSON, api-version);
 * - `hash-mismatch`: a file whose bytes do not have the hash its index listed;
 * - `file-not-listed`: a download of a file the filtered page does not list (after the cutoff, or unknown).
 */
export type IndexFailureReason =
  'upstream-unreachable' | 'upstream-timeout' | `upstream-status-${number}` | 'upstream-invalid' | 'hash-mismatch' | 'file-not-listed';

export function indexFailure(
  reason: IndexFailureReason,
  message: string,
  options: { status?: number; cause?: unknown } = {},
): OutsideServiceError {
  return new OutsideServiceError('package-index', reason, message, {
    ...options,
    retryable: reason === 'upstream-unreachable' || reason === 'upstream-timeout' || /^upstream-status-(5\d\d|429)$/.test(reason),
  });
}

/** The reason of an index failure, or null for any other error. */
export function indexFailureReason(error: unknown): string | null {
  return error instanceof OutsideServiceError && error.service === 'package-index' ? error.reason : null;
}
