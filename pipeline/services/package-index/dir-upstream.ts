import { createReadStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DistDirectory } from './dist-directory.js';
import { indexFailure } from './index-failure.js';
import type { IndexFile } from './index-page.js';
import type { FileBody, Upstream, UpstreamPage } from './upstream.js';

/**
 * A directory of wheels and sdists as the upstream (`dir:PATH`): upload times from its
 * `index.json`, else the files' modification times (`DistDirectory`). Read afresh for each page,
 * never cached in the store.
 */
export class DirUpstream implements Upstream {
  readonly description: string;
  readonly #dir: DistDirectory;

  constructor(path: string) {
    this.#dir = new DistDirectory(path);
    this.description = `dir:${path}`;
  }

  projectNames(): Promise<readonly string[] | null> {
    return Promise.resolve([...this.#dir.read().keys()]);
  }

  projectPage(project: string): Promise<UpstreamPage> {
    const files = this.#dir.read().get(project);
    if (!files)
      return Promise.reject(indexFailure('upstream-status-404', `${this.description}: no distribution of ${project}`, { status: 404 }));
    return Promise.resolve({ page: { name: project, files, format: 'json' }, cache: null });
  }

  async openFile(file: IndexFile): Promise<FileBody> {
    const path = fileURLToPath(file.url);
    const stream = createReadStream(path);
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    }).catch((error: unknown) => {
      throw indexFailure('upstream-status-404', `${this.description}: cannot read ${file.filename}: ${(error as Error).message}`, {
        status: 404,
        cause: error,
      });
    });
    return { chunks: stream, size: file.size, abort: () => stream.destroy() };
  }
}
