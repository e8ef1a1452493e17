import { indexFailureReason } from './index-failure.js';
import type { Upstream } from './upstream.js';

/**
 * One file of an index, whole, by its project and its name: what a task folder carries when the
 * store did not keep it as it was served (emit.vendorWheels). No cutoff applies: a lock names the
 * file exactly, and the caller checks its bytes against the lock's SHA-256. Null when the index
 * has no such project or no such file; other failures are the upstream's (OutsideServiceError).
 */
export async function fetchIndexFile(upstream: Upstream, project: string, filename: string): Promise<Buffer | null> {
  let files;
  try {
    files = (await upstream.projectPage(project)).page.files;
  } catch (error) {
    if (indexFailureReason(error) === 'upstream-status-404') return null;
    throw error;
  }
  const file = files.find((f) => f.filename === filename);
  if (!file) return null;
  const body = await upstream.openFile(file);
  const chunks: Buffer[] = [];
  for await (const chunk of body.chunks) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}
