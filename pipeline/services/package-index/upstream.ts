import type { IndexFile, ProjectPage } from './index-page.js';

/** A project page as an upstream answered it. */
export interface UpstreamPage {
  readonly page: ProjectPage;
  /**
   * Null: a new answer. `revalidated`: the stored page, which the upstream confirmed (304).
   * `stale`: the stored page, served because the upstream failed (`staleBecause` names how).
   */
  readonly cache: 'revalidated' | 'stale' | null;
  readonly staleBecause?: string;
}

/** A file's bytes as they arrive, and its size when known. */
export interface FileBody {
  readonly chunks: AsyncIterable<Uint8Array>;
  readonly size: number | null;
  /** Stops the transfer (the client went away). */
  readonly abort: () => void;
}

/**
 * Where the time machine reads the index from: an HTTP(S) simple index (`http-upstream.ts`) or a
 * directory of distributions (`dir-upstream.ts`). Failures are OutsideServiceErrors of the
 * `package-index` service with the reasons of `index-failure.ts`.
 */
export interface Upstream {
  /** For logs: the URL or `dir:PATH`. */
  readonly description: string;
  /** The page of a project (normalized name). No such project: `upstream-status-404`. */
  projectPage(project: string): Promise<UpstreamPage>;
  /** Every project, when the upstream can list them cheaply (a directory); null otherwise. */
  projectNames(): Promise<readonly string[] | null>;
  openFile(file: IndexFile): Promise<FileBody>;
}
