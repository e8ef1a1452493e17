/**
 * Benchmark 10: what the index path costs the demo's builds. The demo's month through synthesize
 * (`perfmine run --until-stage synthesize`, the compiled CLI, the real Docker engine), twice, one
 * after the other on this machine: the demo as it is (the sample depends on its generated
 * package, every build reaches the demo's loopback index through the time machine as of its
 * commit's date), and the sample without the dependency built with no network at all (the demo
 * before the index path: `synthesize.buildNetwork: none`, the offline template). The synthesize
 * stage's wall time, and the median of the verified builds' own build step, for each.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../../cache/store.js';
import { createSampleRepo } from '../../pipeline/demo/sample-repo.js';
import { SAMPLE_DEPENDENCY, writeSampleIndex } from '../../pipeline/demo/sample-index.js';
import { startLocalIndex } from '../../pipeline/services/package-index/local-index.js';
import { tempDir } from '../helpers/index.js';
import { timedCli } from './measure.js';

export interface IndexBuildArm {
  readonly commits: number;
  readonly verified: number;
  readonly stageMs: number;
  /** Median over the verified builds of their `build` step (ms). */
  readonly buildStepMedianMs: number;
  readonly withLock: number;
}

export interface IndexBuildResult {
  readonly withIndex: IndexBuildArm;
  readonly withoutIndex: IndexBuildArm;
  readonly ratio: number;
}

const MONTH = '2025-04';

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function arm(withIndex: boolean): Promise<IndexBuildArm> {
  const dir = tempDir(`bench-index-${withIndex ? 'on' : 'off'}-`);
  const repo = join(dir, 'fastmath');
  createSampleRepo(repo, MONTH, withIndex ? { dependency: SAMPLE_DEPENDENCY } : {});
  const config = join(dir, 'perfmine.config.json');
  writeFileSync(config, JSON.stringify(withIndex ? {} : { synthesize: { offline: true, buildNetwork: 'none' } }));
  if (withIndex) writeSampleIndex(join(dir, 'index'), MONTH);
  const index = withIndex ? await startLocalIndex({ dir: join(dir, 'index') }) : null;
  const db = join(dir, 'perfmine.db');
  try {
    const run = (until: string, env: Record<string, string> = {}) =>
      timedCli(['--config', config, '--db', db, '--llm', 'none', 'run', '--month', MONTH, '--source', `git:${repo}`, '--repo', 'demo/fastmath', '--until-stage', until], env, dir);
    // the stages before synthesize first, untimed
    await run('classify');
    const timed = await run('synthesize', index ? { PERFMINE_INDEX_UPSTREAM: index.url } : {});
    if (timed.code !== 0) throw new Error(`synthesize exited ${timed.code}: ${timed.stderr.slice(-2000)}`);
    const store = openStore(db, { readonly: true });
    try {
      const rows = store
        .prepare<[], { outcome: string; steps: string; lock: string | null }>('SELECT outcome, steps, lock FROM build_attempts')
        .all();
      const verified = rows.filter((r) => r.outcome === 'verified');
      const buildMs = verified.map((r) => (JSON.parse(r.steps) as { step: string; durationMs: number }[]).find((s) => s.step === 'build')?.durationMs ?? 0);
      const commits = (store.prepare("SELECT COUNT(*) AS n FROM stage_items WHERE stage = 'synthesize'").get() as { n: number }).n;
      return {
        commits,
        verified: verified.length,
        stageMs: timed.ms,
        buildStepMedianMs: median(buildMs),
        withLock: verified.filter((r) => r.lock !== null && (JSON.parse(r.lock) as { distributions: { source: string }[] }).distributions.some((d) => d.source === 'index')).length,
      };
    } finally {
      store.close();
    }
  } finally {
    await index?.close();
  }
}

export async function indexBuildBenchmark(): Promise<IndexBuildResult> {
  const withoutIndex = await arm(false);
  const withIndex = await arm(true);
  return { withIndex, withoutIndex, ratio: withIndex.stageMs / withoutIndex.stageMs };
}
