/**
 * Discovery through GitHub code search: `filename:asv.conf.json`, sharded by file size so that
 * more than the search API's 1,000 results per query are reached (shards: code-search-shards.ts).
 */
import type { Logger } from '../../pipeline/logging.js';
import { pickAsvConfigPath } from '../../pipeline/services/git-parse.js';
import type { GitHubService } from '../../pipeline/services/github.js';
import type { DiscoverConfig } from './config.js';
import type { RepositoryCandidate } from './candidate.js';
import { decideShard, shardQuery, type SizeRange } from './code-search-shards.js';

export interface CodeSearchResult {
  readonly candidates: RepositoryCandidate[];
  /** Search requests sent. */
  readonly requests: number;
  /** Shards searched (after splitting). */
  readonly shards: number;
  /** Results no shard could reach (a one-byte range with more than the cap). */
  readonly unreachable: number;
}

export async function searchAsvRepositories(
  gh: GitHubService,
  config: DiscoverConfig['codeSearch'],
  log: Logger,
): Promise<CodeSearchResult> {
  const paths = new Map<string, { name: string; paths: string[] }>();
  let requests = 0;
  let shards = 0;
  let unreachable = 0;
  for (const filename of config.filenames) {
    const queue: SizeRange[] = [{ min: 0, max: config.maxFileSize }];
    while (queue.length > 0) {
      const range = queue.shift()!;
      const q = shardQuery(filename, range);
      const first = await gh.searchCode(q, 1, config.perPage);
      requests += 1;
      const decision = decideShard(range, first.totalCount, config.resultCap, config.perPage);
      if (decision.kind === 'split') {
        log.debug({ q, total: first.totalCount }, 'code search shard over the cap; splitting');
        queue.push(...decision.ranges);
        continue;
      }
      shards += 1;
      const items = [...first.items];
      for (let page = 2; page <= decision.pages; page++) {
        const next = await gh.searchCode(q, page, config.perPage);
        requests += 1;
        items.push(...next.items);
        if (next.items.length === 0) break;
      }
      if (decision.unreachable > 0) {
        unreachable += decision.unreachable;
        log.warn(
          { q, total: first.totalCount, unreachable: decision.unreachable },
          'code search: a one-byte size shard has more results than GitHub returns',
        );
      }
      if (first.incomplete) log.warn({ q }, 'code search: GitHub reports incomplete results for this shard');
      for (const item of items) {
        const key = item.repository.full_name.toLowerCase();
        const entry = paths.get(key) ?? { name: item.repository.full_name, paths: [] };
        entry.paths.push(item.path);
        paths.set(key, entry);
      }
    }
  }
  const candidates = [...paths.values()]
    .map((e): RepositoryCandidate => ({ name: e.name, asvConfigPath: pickAsvConfigPath(e.paths), via: 'code-search' }))
    .sort((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : 1));
  return { candidates, requests, shards, unreachable };
}
