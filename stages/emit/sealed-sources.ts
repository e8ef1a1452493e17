import type { SynthesizeOutput } from '../../pipeline/concepts/records/synthesize-output.js';
import type { PipelineContext } from '../../pipeline/stage.js';
import { buildSettings, Environments, parseCloneSource, wheelhouseOf } from '../../pipeline/services/environments/environment.js';
import { exportSealedHistory } from '../../pipeline/services/environments/sealed-history.js';

/**
 * Where a task folder's sealed history (`source/repo.bundle` and its modules' bundles: the base
 * commit and its ancestors only) comes from: the one seam of emit that touches git or Docker,
 * so that tests of the stage can hand it canned bytes.
 */
export interface SealedSources {
  history(synthesized: SynthesizeOutput, signal?: AbortSignal): Promise<ReadonlyMap<string, Buffer>>;
}

export type SealedSourcesFactory = (ctx: PipelineContext) => SealedSources;

/**
 * A local clone is sealed on this host (no Docker); a URL clone, which perfmine keeps only in its
 * repository tier, is bundled from the commit's source tier (rebuilt when gone). Both give the
 * same bytes for the same history.
 */
export const sealedSourcesOf: SealedSourcesFactory = (ctx) => ({
  async history(s, signal) {
    const clone = parseCloneSource(s.cloneSource);
    if (clone.kind === 'git') return exportSealedHistory(clone.path, s.sha, signal);
    const envs = new Environments(ctx.services.docker, buildSettings(ctx.config), ctx.log);
    const tiers = await envs.ensureTiers({ ...s, repoImage: s.repoImageTag }, wheelhouseOf(ctx.config), signal);
    return envs.sealedHistory(tiers.sourceImage, signal);
  },
});
