/**
 * Benchmark 3: chronological caching. Synthesize over a generated repository of 30 commits in
 * three build eras (pure setup.py; pyproject + C extension with a generated header; src/ layout
 * with a build helper), with the loopback LLM (the real adapter and openai client over HTTP,
 * answering like a competent model shown the failure) and the real Docker engine: once with the
 * script cache (cached and neighbouring scripts), once with it disabled (template, then agent,
 * for every commit). LLM calls and wall time for each, and their ratio.
 */
import { join } from 'node:path';
import { openStore } from '../../cache/store.js';
import { runStage } from '../../pipeline/runner.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { synthesizeStage } from '../../stages/synthesize/index.js';
import { ensureAsvFakeImage } from '../fakes/asv-image.js';
import { serveRulesOverHttp } from '../fakes/rules-over-http.js';
import { buildPythonRepo } from '../fixtures/python-repo.js';
import { ERA_RULES } from '../synthesize/era-agent.js';
import { gitScope, memoryLogger, seedCandidates, tempDir, testConfig, testContext, testLabel } from '../synthesize/harness.js';
import { timed } from './measure.js';

export interface CacheRunResult {
  readonly commits: number;
  readonly verified: number;
  /** Agent conversations, and the HTTP requests they took (tool turns included). */
  readonly llmConversations: number;
  readonly llmRequests: number;
  readonly builds: number;
  readonly ms: number;
}

export interface ChronologicalCacheResult {
  readonly withCache: CacheRunResult;
  readonly withoutCache: CacheRunResult;
  /** LLM requests with the cache / without. */
  readonly llmRatio: number;
  readonly timeRatio: number;
}

async function once(perEra: number, reuse: boolean): Promise<CacheRunResult> {
  const dir = tempDir(`bench-cache-${reuse ? 'on' : 'off'}`);
  const label = testLabel(`bench-cache-${reuse ? 'on' : 'off'}`);
  const docker = new DockerService({ runLabel: label });
  const llm = await serveRulesOverHttp(ERA_RULES);
  const fixture = buildPythonRepo({ dir: join(dir, 'repo'), eras: [{ era: 'setup-py', commits: perEra }, { era: 'pyproject-c', commits: perEra }, { era: 'src-helper', commits: perEra + 1 }] });
  const db = openStore(join(dir, 'perfmine.db'));
  try {
    const bases = fixture.commits.slice(0, -1).map((_, i) => i);
    seedCandidates(db, 'bench/eras', fixture.commits, bases);
    const config = testConfig(join(dir, 'perfmine.db'), {
      llm: { mode: 'openai', baseUrl: llm.url, model: 'scripted-primary', fallbackModel: 'scripted-fallback', timeoutMs: 60_000 },
      synthesize: { offline: true, buildNetwork: 'none', reuse, agent: { roundsPerModel: 3, tokenBudget: 1_000_000 } },
    });
    const { log } = memoryLogger('warn');
    const ctx = testContext({ db, config, docker, log });
    await synthesizeStage.preflight!(ctx, gitScope(fixture.path));
    const run = await timed(() => runStage(ctx, synthesizeStage, gitScope(fixture.path)));
    const builds = (db.prepare('SELECT COUNT(*) AS n FROM build_attempts').get() as { n: number }).n;
    return { commits: bases.length, verified: run.value.done, llmConversations: llm.calls.length, llmRequests: llm.server.count(), builds, ms: run.ms };
  } finally {
    db.close();
    await llm.close();
    await docker.removeLabelled(label);
  }
}

export async function chronologicalCacheBenchmark(options: { perEra?: number } = {}): Promise<ChronologicalCacheResult> {
  await ensureAsvFakeImage();
  const perEra = options.perEra ?? 10;
  const withCache = await once(perEra, true);
  const withoutCache = await once(perEra, false);
  return { withCache, withoutCache, llmRatio: withCache.llmRequests / withoutCache.llmRequests, timeRatio: withCache.ms / withoutCache.ms };
}
