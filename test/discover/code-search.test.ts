import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideShard, shardQuery, splitRange } from '../../stages/discover/code-search-shards.js';
import { searchAsvRepositories } from '../../stages/discover/code-search.js';
import { testContext } from '../fixtures/context.js';
import { FakeGitHub, parseSearchQuery, type FakeRepo } from '../fakes/github-server.js';

describe('code search sharding (pure)', () => {
  it('splits a range over the cap in halves until it fits or is one byte wide', () => {
    expect(shardQuery('asv.conf.json', { min: 0, max: 400 })).toBe('filename:asv.conf.json size:0..400');
    expect(splitRange({ min: 0, max: 400 })).toEqual([
      { min: 0, max: 200 },
      { min: 201, max: 400 },
    ]);
    expect(splitRange({ min: 7, max: 7 })).toBeNull();
    expect(decideShard({ min: 0, max: 400 }, 2500, 1000, 100)).toEqual({
      kind: 'split',
      ranges: [
        { min: 0, max: 200 },
        { min: 201, max: 400 },
      ],
    });
    expect(decideShard({ min: 0, max: 400 }, 950, 1000, 100)).toEqual({ kind: 'read', pages: 10, unreachable: 0 });
    expect(decideShard({ min: 5, max: 5 }, 1200, 1000, 100)).toEqual({ kind: 'read', pages: 10, unreachable: 200 });
    expect(decideShard({ min: 0, max: 9 }, 0, 1000, 100)).toEqual({ kind: 'read', pages: 1, unreachable: 0 });
    expect(parseSearchQuery('filename:asv.conf.json size:10..20')).toMatchObject({ filename: 'asv.conf.json', minSize: 10, maxSize: 20 });
  });
});

describe('code search against the loopback server', () => {
  let gh: FakeGitHub;
  const total = 2600;
  beforeAll(async () => {
    // 2,600 repositories with an asv.conf.json of 200..1499 bytes; a few with a .jsonc or a nested config.
    const repos: FakeRepo[] = Array.from({ length: total }, (_, i) => ({
      fullName: `owner${i}/proj${i}`,
      files: {
        [i % 10 === 0 ? 'benchmarks/asv.conf.json' : 'asv.conf.json']: `{"project": "proj${i}"${' '.repeat(200 + (i % 1300))}}`,
        ...(i % 500 === 1 ? { 'asv.conf.jsonc': '// c\n{}' } : {}),
      },
    }));
    gh = await FakeGitHub.start({ repos });
  });
  afterAll(async () => {
    await gh.close();
  });

  it('reaches more than the 1,000-result cap by sharding on size, every repository once', async () => {
    const t = testContext({
      tokens: ['tok'],
      config: { github: { baseUrl: gh.url, retryUnitMs: 1 }, discover: { codeSearch: { intervalMs: 0 } } },
    });
    const result = await searchAsvRepositories(t.ctx.services.github, t.config.discover.codeSearch, t.ctx.log);
    expect(result.candidates).toHaveLength(total);
    expect(result.unreachable).toBe(0);
    expect(result.shards).toBeGreaterThan(2);
    const byName = new Map(result.candidates.map((c) => [c.name, c]));
    expect(byName.get('owner10/proj10')!.asvConfigPath).toBe('benchmarks/asv.conf.json');
    expect(byName.get('owner1/proj1')!.asvConfigPath).toBe('asv.conf.json'); // also has a .jsonc
    const searches = gh.requests((r) => r.path.startsWith('/search/code'));
    expect(searches.every((r) => r.status === 200)).toBe(true); // never asked past the cap
    expect(searches.some((r) => decodeURIComponent(r.path).includes('size:0..393216'))).toBe(true);
    expect(searches.some((r) => decodeURIComponent(r.path).includes('filename:asv.conf.jsonc'))).toBe(true);
    expect(result.requests).toBe(searches.length);
  });
});
